//! Splitting a byte stream that arrives in chunks into `\n`-delimited lines, holding only the
//! unfinished line between chunks. Used by the ledger pass and the archive search.

use std::ops::ControlFlow;

/// The unfinished last line of the chunks fed so far.
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    partial: Vec<u8>,
    /// The most bytes of one line kept (`None`: no bound); the rest of a longer line is dropped.
    cap: Option<usize>,
    /// Whether a line longer than `cap` is skipped whole rather than cut.
    skip_long: bool,
    /// The line being read is longer than `cap` (and is skipped).
    long: bool,
}

impl LineBuffer {
    /// A buffer that keeps at most the first `cap` bytes of each line, so one line without a `\n`
    /// never holds more than `cap` bytes however long it is.
    pub(crate) fn with_cap(cap: usize) -> Self {
        LineBuffer {
            cap: Some(cap),
            ..LineBuffer::default()
        }
    }

    /// A buffer that passes on only the lines of at most `cap` bytes: a longer line is skipped whole
    /// (never cut, which could leave a prefix that reads as a line of its own), and never holds more
    /// than `cap` bytes.
    pub(crate) fn skipping_longer_than(cap: usize) -> Self {
        LineBuffer {
            cap: Some(cap),
            skip_long: true,
            ..LineBuffer::default()
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = match self.cap {
            Some(cap) => cap.saturating_sub(self.partial.len()),
            None => bytes.len(),
        };
        if self.skip_long && bytes.len() > room {
            self.long = true;
            self.partial.clear();
            return;
        }
        if !self.long {
            self.partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }

    /// Calls `line` with every line that `bytes` completes (without its `\n`), in order, until it
    /// answers `Break`; the rest of `bytes` after the last `\n` is kept for the next call.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        mut line: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        while let Some(nl) = memchr::memchr(b'\n', bytes) {
            let cap = self.cap.unwrap_or(usize::MAX);
            let flow = if self.partial.is_empty() && !self.long {
                let whole = &bytes[..nl];
                if self.skip_long && whole.len() > cap {
                    ControlFlow::Continue(())
                } else {
                    line(&whole[..whole.len().min(cap)])
                }
            } else {
                self.keep(&bytes[..nl]);
                let flow = if self.long {
                    ControlFlow::Continue(())
                } else {
                    line(&self.partial)
                };
                self.partial.clear();
                self.long = false;
                flow
            };
            flow?;
            bytes = &bytes[nl + 1..];
        }
        self.keep(bytes);
        ControlFlow::Continue(())
    }

    /// The unfinished last line (empty when the stream ended with `\n`, or when it is a line longer
    /// than a skipping buffer passes on), emptying the buffer.
    pub(crate) fn take_rest(&mut self) -> Vec<u8> {
        self.long = false;
        std::mem::take(&mut self.partial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_do_not_depend_on_chunk_boundaries() {
        let text = b"a\nbc\n\ndef\ngh";
        for size in 1..=text.len() {
            let mut buffer = LineBuffer::default();
            let mut lines: Vec<Vec<u8>> = Vec::new();
            for chunk in text.chunks(size) {
                let _ = buffer.feed(chunk, |l| {
                    lines.push(l.to_vec());
                    ControlFlow::Continue(())
                });
            }
            lines.push(buffer.take_rest());
            assert_eq!(lines, [&b"a"[..], b"bc", b"", b"def", b"gh"], "{size}");
        }
        let mut buffer = LineBuffer::default();
        let mut seen = 0;
        let flow = buffer.feed(b"1\n2\n3\n", |_| {
            seen += 1;
            if seen == 2 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!((flow, seen), (ControlFlow::Break(()), 2));
    }

    /// Issue 27 item 6: a skipping buffer passes on the lines of at most its cap and skips longer
    /// ones whole, however the chunks fall.
    #[test]
    fn a_skipping_buffer_skips_long_lines_whole_issue27_item6() {
        let text = b"abcd\nabcdefgh\nxy\n0123456789\nwxyz";
        for size in 1..=text.len() {
            let mut buffer = LineBuffer::skipping_longer_than(4);
            let mut lines: Vec<Vec<u8>> = Vec::new();
            for chunk in text.chunks(size) {
                let _ = buffer.feed(chunk, |l| {
                    lines.push(l.to_vec());
                    ControlFlow::Continue(())
                });
                assert!(buffer.partial.len() <= 4);
            }
            lines.push(buffer.take_rest());
            assert_eq!(lines, [&b"abcd"[..], b"xy", b"wxyz"], "{size}");
        }
        let mut buffer = LineBuffer::skipping_longer_than(4);
        let _ = buffer.feed(b"0123456", |_| ControlFlow::Continue(()));
        assert!(buffer.take_rest().is_empty());
    }

    #[test]
    fn a_capped_buffer_keeps_the_first_bytes_of_a_long_line_issue12_item1() {
        let text = b"abcdefgh\nxy\n0123456789";
        for size in 1..=text.len() {
            let mut buffer = LineBuffer::with_cap(4);
            let mut lines: Vec<Vec<u8>> = Vec::new();
            for chunk in text.chunks(size) {
                let _ = buffer.feed(chunk, |l| {
                    lines.push(l.to_vec());
                    ControlFlow::Continue(())
                });
                assert!(buffer.partial.len() <= 4);
            }
            lines.push(buffer.take_rest());
            assert_eq!(lines, [&b"abcd"[..], b"xy", b"0123"], "{size}");
        }
    }
}
