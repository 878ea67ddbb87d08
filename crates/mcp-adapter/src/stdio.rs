//! The stdio transport of `serve` (MC-1): newline-delimited JSON-RPC on any reader and writer.
//!
//! # Threads, and no hop for a call
//!
//! There is no async runtime. Worker threads take turns as the reader (leader/follower): the thread
//! holding the input reads one line, decodes it, hands the reading over to the next idle thread and
//! runs the request itself, writing its response straight to the output. A call that takes
//! microseconds thus never waits for another thread to be woken, and a call that blocks (a file lock,
//! a database, a wait for work) blocks only its own thread. A request's in-flight entry is made before
//! the reading is handed over, so a `notifications/cancelled` read later always finds it.
//!
//! # Bounds
//!
//! At most [`MAX_IN_FLIGHT`] requests run at once, holding at most [`MAX_IN_FLIGHT_BYTES`] of request
//! text: while either bound is reached no thread reads, so a client that never reads its answers
//! stops being read instead of growing the server (issue 12 item 8). A line over
//! [`wire::MAX_LINE`] is skipped to its end and refused; only its first bytes are kept, to find its id.
//!
//! # Cancellation and progress (issue 14)
//!
//! A `tools/call` runs under a [`CallContext`]: `notifications/cancelled` for it calls
//! [`CallContext::cancel`] and its answer is then never sent (as MCP requires); a
//! `_meta.progressToken` gives the context a channel that sends `notifications/progress` with it.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::registry::{CallContext, ProgressFn};
use crate::server::{self, Server};
use crate::wire::{self, IdKey, Message, Refusal};

/// The most requests the server runs at once; reading stops while they run.
pub const MAX_IN_FLIGHT: usize = 64;
/// The most request text the requests in flight may hold together (one request of any size up to
/// [`wire::MAX_LINE`] is always admitted when nothing else runs).
pub const MAX_IN_FLIGHT_BYTES: usize = 64 * 1024 * 1024;
/// How much of an over-long line is kept to find its id.
const KEPT_OF_A_LONG_LINE: usize = 64 * 1024;

/// A running session: worker threads serving one input and one output.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

impl Session {
    /// Starts serving `server` on `input` and `output`.
    pub fn start(
        server: Server,
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> Self {
        let shared = Arc::new(Shared {
            server,
            input: Mutex::new(LineReader::new(Box::new(input))),
            output: Mutex::new(Box::new(output)),
            output_failed: AtomicBool::new(false),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            waiting: AtomicUsize::new(0),
        });
        shared.state().threads = 1;
        if !Shared::spawn(&shared) {
            shared.state().threads = 0;
            shared.close();
        }
        Session { shared }
    }

    /// Waits until the input has ended (or the output failed) and every request in flight is answered.
    pub fn wait(&self) {
        let mut state = self.shared.state();
        while !(state.closed && state.busy == 0) {
            state = self.shared.wait(state);
        }
    }

    /// Stops taking work (SIGTERM, SIGINT): every request read from now on is refused, and every call
    /// in flight is told to end what it waits for ([`CallContext::cancel`]); their answers are still
    /// sent.
    pub fn stop(&self) {
        let contexts: Vec<CallContext> = {
            let mut state = self.shared.state();
            state.stopping = true;
            state.calls.iter().map(|c| c.context.clone()).collect()
        };
        for context in contexts {
            context.cancel();
        }
    }

    /// Waits up to `timeout` until no request is in flight; true when none is.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.state();
        while state.busy > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// The number of requests in flight.
    pub fn in_flight(&self) -> usize {
        self.shared.state().busy
    }
}

/// Serves `server` on `input` and `output` until the input ends and every request is answered.
pub fn serve(server: Server, input: impl Read + Send + 'static, output: impl Write + Send + 'static) {
    Session::start(server, input, output).wait();
}

struct Shared {
    server: Server,
    input: Mutex<LineReader>,
    output: Mutex<Box<dyn Write + Send>>,
    output_failed: AtomicBool,
    state: Mutex<State>,
    changed: Condvar,
    /// Threads waiting to become the reader.
    waiting: AtomicUsize,
}

#[derive(Default)]
struct State {
    /// Live worker threads.
    threads: usize,
    /// Requests being handled, and the bytes of their lines.
    busy: usize,
    busy_bytes: usize,
    /// The input ended or the output failed: no more reading.
    closed: bool,
    /// A signal asked the server to stop.
    stopping: bool,
    /// The `tools/call`s in flight.
    calls: Vec<InFlight>,
    serial: u64,
}

struct InFlight {
    key: IdKey,
    serial: u64,
    context: CallContext,
    state: Arc<CallState>,
}

/// What the transport knows of one call beyond its context.
#[derive(Default)]
struct CallState {
    /// The client cancelled it: its answer is not sent.
    cancelled_by_client: AtomicBool,
    /// Its answer is out (or suppressed): no more progress.
    finished: AtomicBool,
}

/// What a worker does with the line it read, once the reading is handed over.
enum Work<'a> {
    Nothing,
    Reply(Vec<u8>),
    Request(wire::Id<'a>, std::borrow::Cow<'a, str>, wire::Params<'a>),
    Call(wire::Id<'a>, wire::Params<'a>, CallContext, Arc<CallState>, u64),
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(guard).unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts one more worker (the caller counted it in `threads`); false when the system refused.
    fn spawn(shared: &Arc<Shared>) -> bool {
        let worker = Arc::clone(shared);
        let started = std::thread::Builder::new()
            .name(String::from("shiftwork-mcp"))
            .spawn(move || {
                while worker.serve_one() {}
                worker.state().threads -= 1;
                worker.changed.notify_all();
            });
        if let Err(e) = &started {
            tracing::warn!("cannot start another worker thread: {e}");
        }
        started.is_ok()
    }

    fn close(&self) {
        self.state().closed = true;
        self.changed.notify_all();
    }

    /// Reads and serves one line; false when this worker should end.
    fn serve_one(self: &Arc<Self>) -> bool {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let mut input = self.input.lock().unwrap_or_else(PoisonError::into_inner);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        {
            let mut state = self.state();
            while !state.closed && state.busy > 0 && state.busy_bytes >= MAX_IN_FLIGHT_BYTES {
                state = self.wait(state);
            }
            if state.closed {
                return false;
            }
        }
        let line = match input.next_line() {
            Ok(Line::Message(line)) => line,
            Ok(Line::TooLong { kept, length }) => {
                let id = wire::recover_id(&kept);
                tracing::debug!(length, "answered: a line over 16 MiB");
                drop(input);
                let refusal = Refusal {
                    code: wire::INVALID_REQUEST,
                    message: format!(
                        "Invalid request: the message is {length} bytes long, over the limit of {} bytes (16 MiB)",
                        wire::MAX_LINE
                    ),
                    id,
                };
                self.send(&server::refusal_line(&refusal));
                return true;
            }
            Ok(Line::End) => {
                self.close();
                return false;
            }
            Err(e) => {
                tracing::debug!("the input failed: {e}");
                self.close();
                return false;
            }
        };
        let size = line.len();
        let work = self.classify(&line);
        {
            let mut state = self.state();
            state.busy += 1;
            state.busy_bytes += size;
            if self.waiting.load(Ordering::SeqCst) == 0 && state.threads < MAX_IN_FLIGHT {
                state.threads += 1;
                drop(state);
                if !Shared::spawn(self) {
                    self.state().threads -= 1;
                }
            }
        }
        drop(input);
        let serial = self.run(work);
        let mut state = self.state();
        state.busy -= 1;
        state.busy_bytes -= size;
        if let Some(serial) = serial {
            state.calls.retain(|c| c.serial != serial);
        }
        drop(state);
        self.changed.notify_all();
        true
    }

    /// Decodes a line while this thread still holds the input: notifications take effect here, in
    /// order, and a call is entered in flight before any later line is read.
    fn classify<'a>(self: &Arc<Self>, line: &'a [u8]) -> Work<'a> {
        match wire::decode(line) {
            Ok(None | Some(Message::Response)) => Work::Nothing,
            Ok(Some(Message::Notification { method, params })) => {
                if method == "notifications/cancelled"
                    && let Some(request) = params.request_id
                {
                    self.cancel(&IdKey::of(request));
                }
                Work::Nothing
            }
            Ok(Some(Message::Request { id, method, params })) => {
                if self.state().stopping {
                    return Work::Reply(server::error_line(
                        Some(id.raw()),
                        wire::INTERNAL_ERROR,
                        "the server is shutting down (it received SIGTERM or SIGINT)",
                    ));
                }
                if method != "tools/call" {
                    return Work::Request(id, method, params);
                }
                let call = Arc::new(CallState::default());
                let progress = params.progress_token.map(|token| self.progress_fn(token, &call));
                let context = CallContext::new(progress);
                let mut state = self.state();
                state.serial += 1;
                let serial = state.serial;
                state.calls.push(InFlight {
                    key: id.key(),
                    serial,
                    context: context.clone(),
                    state: Arc::clone(&call),
                });
                drop(state);
                Work::Call(id, params, context, call, serial)
            }
            Err(refusal) => {
                tracing::debug!(code = refusal.code, message = %refusal.message, "answered: a malformed message");
                Work::Reply(server::refusal_line(&refusal))
            }
        }
    }

    /// Does the work of a line; returns the serial of the call it ran, if any.
    fn run(&self, work: Work<'_>) -> Option<u64> {
        match work {
            Work::Nothing => None,
            Work::Reply(line) => {
                self.send(&line);
                None
            }
            Work::Request(id, method, params) => {
                self.send(&self.server.respond(id, &method, &params));
                None
            }
            Work::Call(id, params, context, call, serial) => {
                let line = match self.server.prepare_call(id, &params) {
                    Err(refusal) => server::refusal_line(&refusal),
                    Ok((tool, arguments)) => {
                        let arguments = arguments.in_context(context);
                        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            tool.invoke(&arguments)
                        })) {
                            Ok(outcome) => server::call_result_line(id.raw(), &outcome),
                            Err(panic) => {
                                let what = panic
                                    .downcast_ref::<&str>()
                                    .map(|s| (*s).to_owned())
                                    .or_else(|| panic.downcast_ref::<String>().cloned())
                                    .unwrap_or_default();
                                tracing::error!(tool = tool.name, "the tool handler panicked: {what}");
                                server::error_line(
                                    Some(id.raw()),
                                    wire::INTERNAL_ERROR,
                                    &format!(
                                        "the tool handler panicked: {}",
                                        shiftwork_seams::echo::clip_echo(&what)
                                    ),
                                )
                            }
                        }
                    }
                };
                if call.cancelled_by_client.load(Ordering::SeqCst) {
                    tracing::debug!("a cancelled call's answer was not sent");
                } else {
                    self.send(&line);
                }
                call.finished.store(true, Ordering::SeqCst);
                Some(serial)
            }
        }
    }

    /// `notifications/cancelled`: cancels the calls in flight with that id.
    fn cancel(&self, key: &IdKey) {
        let contexts: Vec<CallContext> = {
            let state = self.state();
            state
                .calls
                .iter()
                .filter(|c| c.key == *key)
                .map(|c| {
                    c.state.cancelled_by_client.store(true, Ordering::SeqCst);
                    c.context.clone()
                })
                .collect()
        };
        for context in contexts {
            context.cancel();
        }
    }

    /// The progress channel of a call whose client sent `token`.
    fn progress_fn(self: &Arc<Self>, token: &str, call: &Arc<CallState>) -> ProgressFn {
        let shared = Arc::downgrade(self);
        let call = Arc::clone(call);
        let token = token.to_owned();
        Box::new(move |progress, total, message| {
            if call.finished.load(Ordering::SeqCst) || call.cancelled_by_client.load(Ordering::SeqCst) {
                return;
            }
            if let (Some(shared), Some(line)) = (
                shared.upgrade(),
                server::progress_line(&token, progress, total, message),
            ) {
                shared.send(&line);
            }
        })
    }

    /// Writes one message line; a failed output ends the session.
    fn send(&self, line: &[u8]) {
        if self.output_failed.load(Ordering::SeqCst) {
            return;
        }
        let mut output = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = output.write_all(line).and_then(|()| output.flush()) {
            drop(output);
            if !self.output_failed.swap(true, Ordering::SeqCst) {
                tracing::debug!("the output failed, the session ends: {e}");
            }
            self.close();
        }
    }
}

/// One line of input.
enum Line {
    Message(Vec<u8>),
    /// A line over [`wire::MAX_LINE`]: its first bytes and its length.
    TooLong {
        kept: Vec<u8>,
        length: usize,
    },
    End,
}

/// A bounded line reader: lines of at most [`wire::MAX_LINE`] bytes; a longer one is skipped to its
/// newline, keeping only its start.
struct LineReader {
    source: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`; `buf[start..searched]` holds no newline.
    start: usize,
    searched: usize,
    end: usize,
    eof: bool,
}

const CHUNK: usize = 64 * 1024;

impl LineReader {
    fn new(source: Box<dyn Read + Send>) -> Self {
        LineReader {
            source,
            buf: vec![0; CHUNK],
            start: 0,
            searched: 0,
            end: 0,
            eof: false,
        }
    }

    fn next_line(&mut self) -> io::Result<Line> {
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[self.searched..self.end]) {
                let newline = self.searched + at;
                if newline - self.start > wire::MAX_LINE {
                    let kept = self.buf[self.start..self.start + KEPT_OF_A_LONG_LINE].to_vec();
                    let length = newline - self.start;
                    self.start = newline + 1;
                    self.searched = self.start;
                    self.shrink();
                    return Ok(Line::TooLong { kept, length });
                }
                let line = self.buf[self.start..newline].to_vec();
                self.start = newline + 1;
                self.searched = self.start;
                self.shrink();
                return Ok(Line::Message(line));
            }
            self.searched = self.end;
            if self.end - self.start > wire::MAX_LINE {
                return self.skip_long_line();
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(Line::End);
                }
                let line = self.buf[self.start..self.end].to_vec();
                self.start = self.end;
                self.searched = self.end;
                return Ok(Line::Message(line));
            }
            self.fill()?;
        }
    }

    /// Reads more input after the unread bytes, moving them to the front and growing the buffer
    /// when needed.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 && (self.start == self.end || self.buf.len() - self.end < CHUNK) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.searched -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < CHUNK {
            let grown = (self.buf.len() * 2).max(self.end + CHUNK);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The current line is over the limit: keep its start, drop the rest up to its newline.
    fn skip_long_line(&mut self) -> io::Result<Line> {
        let kept = self.buf[self.start..self.start + KEPT_OF_A_LONG_LINE].to_vec();
        let mut length = 0;
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                length += at;
                self.start += at + 1;
                self.searched = self.start;
                break;
            }
            length += self.end - self.start;
            self.start = self.end;
            self.searched = self.end;
            if self.eof {
                break;
            }
            self.fill()?;
        }
        self.shrink();
        Ok(Line::TooLong { kept, length })
    }

    /// Gives back the memory a long line took, once little is left unread.
    fn shrink(&mut self) {
        if self.buf.len() > 4 * CHUNK && self.end - self.start < CHUNK {
            let mut fresh = self.buf[self.start..self.end].to_vec();
            fresh.resize(CHUNK, 0);
            self.end -= self.start;
            self.searched -= self.start;
            self.start = 0;
            self.buf = fresh;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its bytes in pieces of `step`.
    struct Trickle(Vec<u8>, usize, usize);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.2.min(buf.len()).min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }

    fn lines(input: Vec<u8>, step: usize) -> Vec<String> {
        let mut reader = LineReader::new(Box::new(Trickle(input, 0, step)));
        let mut out = Vec::new();
        loop {
            match reader.next_line().unwrap() {
                Line::Message(l) if l.len() > 100 => out.push(format!("a line of {} bytes", l.len())),
                Line::Message(l) => out.push(String::from_utf8(l).unwrap()),
                Line::TooLong { kept, length } => out.push(format!("long {length} {}", kept.len())),
                Line::End => return out,
            }
        }
    }

    #[test]
    fn lines_split_at_newlines_whatever_the_reads_and_a_long_one_is_skipped() {
        for step in [1, 7, CHUNK, 1 << 20] {
            assert_eq!(
                lines(b"a\n\nbc\nd".to_vec(), step),
                ["a", "", "bc", "d"],
                "{step}"
            );
            let mut big = b"x\n".to_vec();
            big.extend(std::iter::repeat_n(b'y', wire::MAX_LINE + 10));
            big.extend(b"\nz\n");
            if step >= 7 {
                assert_eq!(
                    lines(big, step),
                    [
                        "x".to_owned(),
                        format!("long {} {KEPT_OF_A_LONG_LINE}", wire::MAX_LINE + 10),
                        "z".to_owned()
                    ],
                    "{step}"
                );
            }
        }
    }
}
