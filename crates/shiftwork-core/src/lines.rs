//! Splitting a byte stream that arrives in chunks into `\n`-delimited lines, holding only the
//! unfinished line between chunks. Used by the ledger pass and the archive search.

use std::ops::ControlFlow;

/// The unfinished last line of the chunks fed so far.
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    partial: Vec<u8>,
}

impl LineBuffer {
    /// Calls `line` with every line that `bytes` completes (without its `\n`), in order, until it
    /// answers `Break`; the rest of `bytes` after the last `\n` is kept for the next call.
    pub(crate) fn feed(
        &mut self,
        mut bytes: &[u8],
        mut line: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        while let Some(nl) = memchr::memchr(b'\n', bytes) {
            let flow = if self.partial.is_empty() {
                line(&bytes[..nl])
            } else {
                self.partial.extend_from_slice(&bytes[..nl]);
                let flow = line(&self.partial);
                self.partial.clear();
                flow
            };
            flow?;
            bytes = &bytes[nl + 1..];
        }
        self.partial.extend_from_slice(bytes);
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
}
