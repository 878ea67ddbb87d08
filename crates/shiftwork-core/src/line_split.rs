//! Splitting a byte stream that arrives in chunks into `\n`-delimited lines, holding only the
//! unfinished line between chunks. Used by the ledger pass and the archive search.

use std::ops::ControlFlow;

/// The unfinished last line of the chunks fed so far.
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    partial: Vec<u8>,
    /// The most bytes of one line kept (`None`: no bound); the rest of a longer line is dropped.
    cap: Option<usize>,
}

impl LineBuffer {
    /// A buffer that keeps at most the first `cap` bytes of each line, so one line without a `\n`
    /// never holds more than `cap` bytes however long it is.
    pub(crate) fn with_cap(cap: usize) -> Self {
        LineBuffer {
            partial: Vec::new(),
            cap: Some(cap),
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = match self.cap {
            Some(cap) => cap.saturating_sub(self.partial.len()),
            None => bytes.len(),
        };
        self.partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Calls `line` with every line that `bytes` completes (without its `\n`), in order, until it
    /// answers `Break`; the rest of `bytes` after the last `\n` is kept for the next call.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        mut line: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        while let Some(nl) = memchr::memchr(b'\n', bytes) {
            let flow = if self.partial.is_empty() {
                let whole = &bytes[..nl];
                line(&whole[..whole.len().min(self.cap.unwrap_or(usize::MAX))])
            } else {
                self.keep(&bytes[..nl]);
                let flow = line(&self.partial);
                self.partial.clear();
                flow
            };
            flow?;
            bytes = &bytes[nl + 1..];
        }
        self.keep(bytes);
        ControlFlow::Continue(())
    }

    /// The unfinished last line (empty when the stream ended with `\n`), emptying the buffer.
    pub(crate) fn take_rest(&mut self) -> Vec<u8> {
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
