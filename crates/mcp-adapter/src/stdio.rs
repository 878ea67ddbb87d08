//! The stdio transport of `serve`: newline-delimited JSON-RPC on any reader and writer.
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
//! At most [`MAX_IN_FLIGHT`] requests run at once, holding at most [`MAX_IN_FLIGHT_BYTES`] of
//! request text. While either bound is reached, one more thread goes on reading, so that control
//! messages are still handled: a `notifications/cancelled` ends its call (or drops a request not
//! yet started), a `ping` is answered at once, and a malformed line is refused; only new work
//! waits, *parked* in arrival order until a request ends and its worker takes the oldest. Once
//! [`MAX_PARKED`] requests (or [`MAX_IN_FLIGHT_BYTES`] of their text) are parked, nothing more is
//! read, so a client that never reads its answers stops being read instead of growing the server. A
//! line over [`wire::MAX_LINE`] is skipped to its end and refused; its id is looked for on the way
//! ([`wire::IdFinder`]).
//!
//! # Cancellation and progress
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
use crate::telemetry::{self, Transport};
use crate::wire::{self, IdKey, Message, Refusal};

/// The most requests the server runs at once; reading stops while they run.
pub const MAX_IN_FLIGHT: usize = 64;
/// The most request text the requests in flight may hold together (one request of any size up to
/// [`wire::MAX_LINE`] is always admitted when nothing else runs), and the most the parked ones may.
pub const MAX_IN_FLIGHT_BYTES: usize = 64 * 1024 * 1024;
/// The most requests read while [`MAX_IN_FLIGHT`] run, waiting for one of them to end.
pub const MAX_PARKED: usize = MAX_IN_FLIGHT;

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
            calls: Mutex::new(Calls::default()),
            threads: AtomicUsize::new(1),
            busy: AtomicUsize::new(0),
            busy_bytes: AtomicUsize::new(0),
            parked: Mutex::new(std::collections::VecDeque::new()),
            parked_len: AtomicUsize::new(0),
            parked_bytes: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            changed: Condvar::new(),
            sleepers: [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)],
            subscriber: Mutex::new(None),
            listens: Mutex::new(Vec::new()),
        });
        if !Shared::spawn(&shared) {
            shared.threads.store(0, Ordering::SeqCst);
            shared.close();
        }
        Session { shared }
    }

    /// Waits until the input has ended (or the output failed) and every request in flight is answered.
    pub fn wait(&self) {
        let shared = &self.shared;
        shared.sleep_until(Wait::Closed, None, || shared.closed.load(Ordering::SeqCst));
        shared.sleep_until(Wait::Idle, None, || shared.idle());
    }

    /// Stops taking work (SIGTERM, SIGINT): every request read from now on is refused, and every call
    /// in flight is told to end what it waits for ([`CallContext::cancel`]); their answers are still
    /// sent.
    pub fn stop(&self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let contexts: Vec<CallContext> = self
            .shared
            .calls()
            .list
            .iter()
            .map(|c| c.context.clone())
            .collect();
        for context in contexts {
            context.cancel();
        }
    }

    /// Waits up to `timeout` until no request is in flight; true when none is.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let shared = &self.shared;
        shared.sleep_until(Wait::Idle, Some(Instant::now() + timeout), || shared.idle())
    }

    /// The number of requests in flight.
    pub fn in_flight(&self) -> usize {
        self.shared.busy.load(Ordering::SeqCst)
    }
}

/// Gives a pipe a 1 MiB buffer (Linux; elsewhere, or when it is no pipe or the system refuses, nothing
/// changes): a request or an answer of a few hundred kilobytes then crosses in one write instead of a
/// handful of wake-ups at 64 KiB each.
pub fn enlarge_pipe(fd: std::os::fd::BorrowedFd<'_>) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = fd.as_raw_fd();
        // SAFETY: fstat and fcntl on a descriptor the caller holds; `stat` is written by fstat.
        unsafe {
            let mut stat: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut stat) == 0 && (stat.st_mode & libc::S_IFMT) == libc::S_IFIFO {
                libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Serves `server` on `input` and `output` until the input ends and every request is answered.
pub fn serve(server: Server, input: impl Read + Send + 'static, output: impl Write + Send + 'static) {
    Session::start(server, input, output).wait();
}

/// What the workers share. The counters are atomics, so that the path of a request takes no lock
/// another worker holds but the input's (the hand-over) and no condition-variable call unless someone
/// sleeps on one (`sleepers`).
struct Shared {
    server: Server,
    input: Mutex<LineReader>,
    output: Mutex<Box<dyn Write + Send>>,
    output_failed: AtomicBool,
    /// The `tools/call`s in flight.
    calls: Mutex<Calls>,
    /// Live worker threads.
    threads: AtomicUsize,
    /// Requests being handled, and the bytes of their lines.
    busy: AtomicUsize,
    busy_bytes: AtomicUsize,
    /// Requests read while no slot was free, oldest first; `parked_len` is raised before a request is
    /// parked and `busy` is lowered before the parked ones are looked at (see [`Shared::park`]).
    parked: Mutex<std::collections::VecDeque<Parked>>,
    parked_len: AtomicUsize,
    parked_bytes: AtomicUsize,
    /// The input ended or the output failed: no more reading.
    closed: AtomicBool,
    /// A signal asked the server to stop.
    stopping: AtomicBool,
    /// Threads waiting to become the reader.
    waiting: AtomicUsize,
    /// Where the waits on the counters sleep ([`Shared::sleep_until`]), and how many sleep for each
    /// [`Wait`].
    sleep: Mutex<()>,
    changed: Condvar,
    sleepers: [AtomicUsize; 3],
    /// This session's `resources/subscribe`s: its subscriber in the server's hub, once it has one.
    subscriber: Mutex<Option<u64>>,
    /// The `subscriptions/listen` requests open, by id, with their subscribers in the hub (`None`
    /// from when the request is read until its subscriber is made, so that a cancel read meanwhile
    /// finds it).
    listens: Mutex<Vec<(IdKey, Option<u64>)>>,
}

/// What a sleeper waits for: a request's end wakes only those it concerns, so that in the common case
/// (nobody waits) it makes no system call.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// The input ended or the output failed.
    Closed = 0,
    /// No request in flight.
    Idle = 1,
    /// Parked requests left room for more.
    Budget = 2,
}

/// A request read while every slot was taken.
struct Parked {
    line: LineBuf,
    key: IdKey,
    /// The client cancelled it before it started: it is dropped unanswered.
    cancelled: bool,
}

#[derive(Default)]
struct Calls {
    list: Vec<InFlight>,
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
    Call(
        wire::Id<'a>,
        wire::Params<'a>,
        CallContext,
        Arc<CallState>,
        u64,
        Option<ReadArguments<'a>>,
    ),
}

use crate::server::ReadArguments;

impl Shared {
    fn calls(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps until `done` holds (true) or `deadline` passes (false). Whoever changes what `done`
    /// reads calls [`Shared::wake`] with `what` after the change.
    fn sleep_until(&self, what: Wait, deadline: Option<Instant>, done: impl Fn() -> bool) -> bool {
        let mut guard = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
        self.sleepers[what as usize].fetch_add(1, Ordering::SeqCst);
        let reached = loop {
            if done() {
                break true;
            }
            guard = match deadline {
                None => self.changed.wait(guard).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break false;
                    }
                    self.changed
                        .wait_timeout(guard, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        };
        self.sleepers[what as usize].fetch_sub(1, Ordering::SeqCst);
        reached
    }

    /// Wakes the sleepers for any of `what`, if there are (no system call otherwise).
    fn wake(&self, what: &[Wait]) {
        if what
            .iter()
            .any(|w| self.sleepers[*w as usize].load(Ordering::SeqCst) > 0)
        {
            let _guard = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
            self.changed.notify_all();
        }
    }

    /// Starts one more worker (the caller counted it in `threads`); false when the system refused.
    fn spawn(shared: &Arc<Shared>) -> bool {
        let worker = Arc::clone(shared);
        let started = std::thread::Builder::new()
            .name(String::from("shiftwork-mcp"))
            .spawn(move || {
                while worker.serve_one() {}
                worker.threads.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = &started {
            tracing::warn!("cannot start another worker thread: {e}");
        }
        started.is_ok()
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.wake(&[Wait::Closed, Wait::Idle, Wait::Budget]);
    }

    /// No request runs and none is parked.
    fn idle(&self) -> bool {
        self.busy.load(Ordering::SeqCst) == 0 && self.parked_len.load(Ordering::SeqCst) == 0
    }

    /// The parked requests fill their bound: nothing more is read.
    fn parked_full(&self) -> bool {
        self.parked_len.load(Ordering::SeqCst) >= MAX_PARKED
            || self.parked_bytes.load(Ordering::SeqCst) >= MAX_IN_FLIGHT_BYTES
    }

    /// Takes a slot for a request of `size` bytes when one is free: fewer than [`MAX_IN_FLIGHT`] run,
    /// and they hold less than [`MAX_IN_FLIGHT_BYTES`] (or none runs at all).
    fn try_admit(&self, size: usize) -> bool {
        let admitted = self
            .busy
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |busy| {
                (busy < MAX_IN_FLIGHT
                    && (busy == 0 || self.busy_bytes.load(Ordering::SeqCst) < MAX_IN_FLIGHT_BYTES))
                    .then_some(busy + 1)
            })
            .is_ok();
        if admitted {
            self.busy_bytes.fetch_add(size, Ordering::SeqCst);
        }
        admitted
    }

    /// Gives back the slot of a request of `size` bytes.
    fn release(&self, size: usize) {
        let bytes = self.busy_bytes.fetch_sub(size, Ordering::SeqCst) - size;
        let busy = self.busy.fetch_sub(1, Ordering::SeqCst) - 1;
        if busy == 0 {
            self.wake(&[Wait::Idle, Wait::Budget]);
        } else if bytes < MAX_IN_FLIGHT_BYTES {
            self.wake(&[Wait::Budget]);
        }
    }

    /// Reads and serves one line; false when this worker should end.
    fn serve_one(self: &Arc<Self>) -> bool {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let mut input = self.input.lock().unwrap_or_else(PoisonError::into_inner);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        if self.parked_full() {
            self.sleep_until(Wait::Budget, None, || {
                self.closed.load(Ordering::SeqCst) || !self.parked_full()
            });
        }
        if self.closed.load(Ordering::SeqCst) {
            return false;
        }
        let mut line = match input.next_line() {
            Ok(Line::Message(line)) => line,
            Ok(Line::TooLong { id, length }) => {
                tracing::debug!(length, "answered: a line over 16 MiB");
                drop(input);
                let refusal = Refusal {
                    code: wire::INVALID_REQUEST,
                    message: format!(
                        "Invalid request: the message is {length} bytes long, over the limit of {} bytes (16 MiB)",
                        wire::MAX_LINE
                    ),
                    id,
                    data: None,
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
        if self.parked_len.load(Ordering::SeqCst) > 0 || !self.try_admit(size) {
            // Every slot is taken: this thread stays the reader, handles a control message at once
            // and parks new work.
            match self.overloaded(line) {
                Some(admitted) => line = admitted,
                None => return true,
            }
        }
        let work = self.classify(&line);
        // Someone must read while this thread works: an idle worker, or a new one (one more than the
        // slots, so that control messages are read while every slot is taken).
        if self.waiting.load(Ordering::SeqCst) == 0 && self.threads.load(Ordering::SeqCst) <= MAX_IN_FLIGHT {
            self.threads.fetch_add(1, Ordering::SeqCst);
            if !Shared::spawn(self) {
                self.threads.fetch_sub(1, Ordering::SeqCst);
            }
        }
        drop(input);
        self.finish(work);
        line.recycle();
        self.release(size);
        self.run_parked();
        true
    }

    /// Runs the work of an admitted line.
    fn finish(self: &Arc<Self>, work: Work<'_>) {
        if let Some(serial) = self.run(work) {
            self.calls().list.retain(|c| c.serial != serial);
        }
    }

    /// A line read while every slot is taken: a notification takes effect, a `ping` is answered and
    /// a malformed line refused, here and now; a request is parked, unless a slot freed meanwhile
    /// and none is parked before it, when it is returned admitted.
    fn overloaded(self: &Arc<Self>, line: LineBuf) -> Option<LineBuf> {
        let key = match wire::decode(&line) {
            Ok(None | Some(Message::Response)) => return None,
            Ok(Some(Message::Notification { method, params })) => {
                if method == "notifications/cancelled"
                    && let Some(request) = params.request_id
                {
                    self.cancel(&IdKey::of(request));
                }
                return None;
            }
            Ok(Some(Message::Request { id, method, params })) if method == "ping" => {
                self.send(&self.server.respond(id, &method, &params));
                return None;
            }
            Ok(Some(Message::Request { id, .. })) => id.key(),
            Err(refusal) => {
                tracing::debug!(code = refusal.code, message = %shiftwork_seams::echo::echo(&refusal.message), "answered: a malformed message");
                self.send(&server::refusal_line(&refusal));
                return None;
            }
        };
        self.park(line, key)
    }

    /// Parks a request, or returns it admitted when a slot is free and nothing is parked before it.
    ///
    /// No parked request waits while a slot is free: the parker raises `parked_len` before it looks
    /// at `busy`, and a finishing worker lowers `busy` before it looks at `parked_len` (both
    /// sequentially consistent), so one of the two sees the other; the queue's lock orders the rest.
    fn park(&self, line: LineBuf, key: IdKey) -> Option<LineBuf> {
        let size = line.len();
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        self.parked_len.fetch_add(1, Ordering::SeqCst);
        if parked.is_empty() && self.try_admit(size) {
            self.parked_len.fetch_sub(1, Ordering::SeqCst);
            return Some(line);
        }
        self.parked_bytes.fetch_add(size, Ordering::SeqCst);
        parked.push_back(Parked {
            line,
            key,
            cancelled: false,
        });
        None
    }

    /// Runs parked requests, oldest first, while a slot is free for them.
    fn run_parked(self: &Arc<Self>) {
        while self.parked_len.load(Ordering::SeqCst) > 0 {
            let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(size) = parked.front().map(|p| p.line.len()) else {
                return;
            };
            if !self.try_admit(size) {
                return;
            }
            let Some(next) = parked.pop_front() else {
                self.release(size);
                return;
            };
            self.parked_bytes.fetch_sub(size, Ordering::SeqCst);
            self.parked_len.fetch_sub(1, Ordering::SeqCst);
            self.wake(&[Wait::Budget]);
            if next.cancelled {
                drop(parked);
                tracing::debug!("a request cancelled before it started was dropped");
                next.line.recycle();
                self.release(size);
                continue;
            }
            // Entered in flight while the queue is locked, so that a cancel finds it in one place or
            // the other.
            let work = self.classify(&next.line);
            drop(parked);
            self.finish(work);
            next.line.recycle();
            self.release(size);
        }
    }

    /// Decodes a line while this thread still holds the input: notifications take effect here, in
    /// order, and a call is entered in flight before any later line is read.
    fn classify<'a>(self: &Arc<Self>, line: &'a [u8]) -> Work<'a> {
        // Where the object a tool read starts, that tool, and its work (the last one read: a
        // repeated `arguments` member replaces the one before it).
        let mut read: Option<(*const u8, ReadArguments<'a>)> = None;
        let registry = self.server.registry();
        let decoded = wire::decode_with(line, &mut |text| {
            // A reader that panicked leaves the object to the decoder, as one that declined.
            let (tool, prefetched) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| registry.prefetch(text))).ok()??;
            read = Some((text.as_ptr(), (tool, prefetched.run)));
            Some((prefetched.len, prefetched.keys))
        });
        match decoded {
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
                if self.stopping.load(Ordering::SeqCst) {
                    return Work::Reply(server::error_line(
                        Some(id.raw()),
                        wire::INTERNAL_ERROR,
                        "the server is shutting down (it received SIGTERM or SIGINT)",
                    ));
                }
                if method == "subscriptions/listen" && self.server.hub().is_some() {
                    self.listens
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((id.key(), None));
                }
                if method != "tools/call" {
                    return Work::Request(id, method, params);
                }
                let call = Arc::new(CallState::default());
                let progress = params.progress_token.map(|token| self.progress_fn(token, &call));
                let context = CallContext::new(progress);
                let mut calls = self.calls();
                calls.serial += 1;
                let serial = calls.serial;
                calls.list.push(InFlight {
                    key: id.key(),
                    serial,
                    context: context.clone(),
                    state: Arc::clone(&call),
                });
                drop(calls);
                // What was read holds only if the arguments the call carries are the object read.
                let read = read
                    .filter(|(at, _)| matches!(&params.arguments, Some(Ok(a)) if std::ptr::eq(a.text.as_ptr(), *at)))
                    .map(|(_, read)| read);
                Work::Call(id, params, context, call, serial, read)
            }
            Err(refusal) => {
                tracing::debug!(code = refusal.code, message = %shiftwork_seams::echo::echo(&refusal.message), "answered: a malformed message");
                Work::Reply(server::refusal_line(&refusal))
            }
        }
    }

    /// Does the work of a line; returns the serial of the call it ran, if any.
    fn run(self: &Arc<Self>, work: Work<'_>) -> Option<u64> {
        match work {
            Work::Nothing => None,
            Work::Reply(line) => {
                self.send(&line);
                None
            }
            Work::Request(id, method, params)
                if self.server.hub().is_some()
                    && matches!(
                        method.as_ref(),
                        "resources/subscribe" | "resources/unsubscribe" | "subscriptions/listen"
                    ) =>
            {
                let request = self
                    .server
                    .request_started(id, &method, &params, Transport::Pipe, None);
                request.finish(self.subscription(id, &method, &params));
                None
            }
            Work::Request(id, method, params) => {
                self.send(&self.server.respond(id, &method, &params));
                None
            }
            Work::Call(id, params, context, call, serial, read) => {
                let answer = match self.server.call(id, &params, context.clone(), read) {
                    // A stdio call waits on its own thread (its context never parks).
                    server::CallAnswer::Parked(parked) => self.server.finish_here(*parked),
                    answer => answer,
                };
                if call.cancelled_by_client.load(Ordering::SeqCst) {
                    tracing::debug!("a cancelled call's answer was not sent");
                    context.undelivered();
                } else {
                    match &answer {
                        server::CallAnswer::Result(outcome, era, _) => {
                            self.send_pieces(&server::ResultLine::of(id.raw(), outcome, *era).pieces())
                        }
                        server::CallAnswer::Refused(line) => self.send(line),
                        server::CallAnswer::Parked(_) => {}
                    }
                }
                call.finished.store(true, Ordering::SeqCst);
                Some(serial)
            }
        }
    }

    /// A sink writing a subscriber's notifications to this session's output while it works.
    fn sink(self: &Arc<Self>) -> crate::subscriptions::Sink {
        let shared = Arc::downgrade(self);
        Arc::new(move |line: Option<&[u8]>| match shared.upgrade() {
            Some(shared) if !shared.output_failed.load(Ordering::SeqCst) => {
                if let Some(line) = line {
                    shared.send(line);
                }
                !shared.output_failed.load(Ordering::SeqCst)
            }
            _ => false,
        })
    }

    /// `resources/subscribe`, `resources/unsubscribe` and `subscriptions/listen`:
    /// the session's subscriber in the server's hub, or a listen stream, which is answered by
    /// notifications until its request is cancelled. What became of the request, for its telemetry.
    fn subscription(
        self: &Arc<Self>,
        id: wire::Id<'_>,
        method: &str,
        params: &wire::Params<'_>,
    ) -> telemetry::Finished {
        let Some(hub) = self.server.hub() else {
            return telemetry::Finished::Error(wire::METHOD_NOT_FOUND);
        };
        let refused = |refusal: &Refusal| {
            self.send(&server::refusal_line(refusal));
            telemetry::Finished::Error(refusal.code)
        };
        if method == "subscriptions/listen" {
            let key = id.key();
            let forget = || {
                let mut listens = self.listens.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(at) = listens.iter().position(|(k, h)| *k == key && h.is_none()) {
                    listens.remove(at);
                }
            };
            let uris = match self.server.listen_uris(id, params) {
                Ok(uris) => uris,
                Err(refusal) => {
                    forget();
                    return refused(&refusal);
                }
            };
            self.send(&crate::subscriptions::acknowledged_line(id.raw(), &uris));
            return match hub.subscribe(uris, Some(id.raw().to_owned()), None, self.sink()) {
                Ok(subscriber) => {
                    let mut listens = self.listens.lock().unwrap_or_else(PoisonError::into_inner);
                    match listens.iter_mut().find(|(k, h)| *k == key && h.is_none()) {
                        Some(entry) => entry.1 = Some(subscriber),
                        // Cancelled while it was being made.
                        None => hub.unsubscribe(subscriber),
                    }
                    telemetry::Finished::Result
                }
                Err(e) => {
                    forget();
                    self.send(&server::error_line(
                        Some(id.raw()),
                        wire::INVALID_REQUEST,
                        &e.to_string(),
                    ));
                    telemetry::Finished::Error(wire::INVALID_REQUEST)
                }
            };
        }
        let era = match server::Era::of(Some(id.raw()), method, params) {
            Ok(era) => era,
            Err(refusal) => return refused(&refusal),
        };
        let uri = match self.server.subscribed_uri(id, params) {
            Ok(uri) => uri,
            Err(refusal) => return refused(&refusal),
        };
        let mut subscriber = self.subscriber.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = match (method, *subscriber) {
            ("resources/unsubscribe", Some(handle)) => {
                hub.remove(handle, &uri);
                true
            }
            ("resources/unsubscribe", None) => true,
            (_, Some(handle)) => hub.add(handle, &uri),
            (_, None) => match hub.subscribe(vec![uri], None, None, self.sink()) {
                Ok(handle) => {
                    *subscriber = Some(handle);
                    true
                }
                Err(_) => false,
            },
        };
        drop(subscriber);
        if kept {
            self.send(&server::result_line(id.raw(), &era.result("{}")));
            telemetry::Finished::Result
        } else {
            self.send(&server::error_line(
                Some(id.raw()),
                wire::INVALID_REQUEST,
                &crate::subscriptions::SubscribeError::Full.to_string(),
            ));
            telemetry::Finished::Error(wire::INVALID_REQUEST)
        }
    }

    /// `notifications/cancelled`: cancels the calls in flight with that id, and drops the parked
    /// requests with it.
    fn cancel(&self, key: &IdKey) {
        let ended: Vec<u64> = {
            let mut listens = self.listens.lock().unwrap_or_else(PoisonError::into_inner);
            let ended = listens
                .iter()
                .filter(|(k, _)| k == key)
                .filter_map(|(_, h)| *h)
                .collect();
            listens.retain(|(k, _)| k != key);
            ended
        };
        if let Some(hub) = self.server.hub() {
            for handle in ended {
                hub.unsubscribe(handle);
            }
        }
        // The queue stays locked while the calls are looked at: a parked request is entered in
        // flight under this lock, so the cancel sees it in one place or the other.
        let mut parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        for p in parked.iter_mut().filter(|p| p.key == *key) {
            p.cancelled = true;
        }
        let contexts: Vec<CallContext> = {
            let calls = self.calls();
            calls
                .list
                .iter()
                .filter(|c| c.key == *key)
                .map(|c| {
                    c.state.cancelled_by_client.store(true, Ordering::SeqCst);
                    c.context.clone()
                })
                .collect()
        };
        drop(parked);
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
        self.send_pieces(&[line]);
    }

    /// Writes one message line given in pieces, with vectored writes (one system call when the pipe
    /// has room); a failed output ends the session.
    fn send_pieces(&self, pieces: &[&[u8]]) {
        if self.output_failed.load(Ordering::SeqCst) {
            return;
        }
        let mut output = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = write_all_vectored(&mut **output, pieces).and_then(|()| output.flush()) {
            drop(output);
            if !self.output_failed.swap(true, Ordering::SeqCst) {
                tracing::debug!("the output failed, the session ends: {e}");
            }
            self.close();
        }
    }
}

/// Writes every piece, in order, with as few vectored writes as the output takes.
fn write_all_vectored(output: &mut dyn Write, pieces: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<io::IoSlice<'_>> = pieces
        .iter()
        .filter(|piece| !piece.is_empty())
        .map(|piece| io::IoSlice::new(piece))
        .collect();
    let mut left = &mut slices[..];
    while !left.is_empty() {
        match output.write_vectored(left) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => io::IoSlice::advance_slices(&mut left, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One line of input.
enum Line {
    Message(LineBuf),
    /// A line over [`wire::MAX_LINE`]: the id its top level shows, wherever it stands, and its length.
    TooLong {
        id: Option<String>,
        length: usize,
    },
    End,
}

/// A line read, `buf[range]`: a short line is copied out of the reader's buffer; a long one (a
/// 3,000-node request is 175 kB) takes the buffer itself, and the reader goes on in a spare one, so
/// the line is never copied. [`LineBuf::recycle`] gives the buffer back once the request is done.
struct LineBuf {
    buf: Vec<u8>,
    range: std::ops::Range<usize>,
    /// Where the buffer goes back to, when it was the reader's.
    spares: Option<Arc<Spares>>,
}

impl std::ops::Deref for LineBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.buf[self.range.clone()]
    }
}

impl LineBuf {
    /// A line copied out of `bytes`.
    fn copied(bytes: &[u8]) -> Self {
        LineBuf {
            buf: bytes.to_vec(),
            range: 0..bytes.len(),
            spares: None,
        }
    }

    /// Hands the buffer back to the reader it came from (kept when it is not too large).
    fn recycle(self) {
        if let Some(spares) = self.spares {
            spares.put(self.buf);
        }
    }
}

/// Buffers a reader may read into: those of the long lines it handed over, once their requests are
/// done. Each is initialized memory already, so taking one costs no zeroing.
#[derive(Default)]
struct Spares(Mutex<Vec<Vec<u8>>>);

impl Spares {
    /// At most this many spares, each of at most [`SPARE_AT_MOST`] bytes: a long line that came once
    /// holds no memory for good.
    const COUNT: usize = 2;

    fn take(&self) -> Option<Vec<u8>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    fn put(&self, buf: Vec<u8>) {
        if buf.len() <= SPARE_AT_MOST {
            let mut spares = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            if spares.len() < Self::COUNT {
                spares.push(buf);
            }
        }
    }
}

/// The largest buffer kept as a spare.
const SPARE_AT_MOST: usize = 1 << 20;

/// A bounded line reader: lines of at most [`wire::MAX_LINE`] bytes; a longer one is skipped to its
/// newline, keeping only its start.
struct LineReader {
    source: Box<dyn Read + Send>,
    buf: Vec<u8>,
    spares: Arc<Spares>,
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
            spares: Arc::default(),
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
                    let id = wire::recover_id(&self.buf[self.start..newline]);
                    let length = newline - self.start;
                    self.start = newline + 1;
                    self.searched = self.start;
                    self.shrink();
                    return Ok(Line::TooLong { id, length });
                }
                let line = self.line(newline);
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
                let line = LineBuf::copied(&self.buf[self.start..self.end]);
                self.start = self.end;
                self.searched = self.end;
                return Ok(Line::Message(line));
            }
            self.fill()?;
        }
    }

    /// The line that ends at `newline`, after which reading goes on: a long line followed by little
    /// takes the buffer (the little is copied into a spare one), any other is copied out.
    fn line(&mut self, newline: usize) -> LineBuf {
        let (start, rest) = (self.start, newline + 1..self.end);
        if newline - start < CHUNK || rest.len() > CHUNK {
            let line = LineBuf::copied(&self.buf[start..newline]);
            self.start = newline + 1;
            self.searched = self.start;
            self.shrink();
            return line;
        }
        let mut fresh = self.spares.take().unwrap_or_default();
        if fresh.len() < rest.len() + CHUNK {
            fresh.resize(rest.len() + CHUNK, 0);
        }
        fresh[..rest.len()].copy_from_slice(&self.buf[rest.clone()]);
        self.start = 0;
        self.searched = 0;
        self.end = rest.len();
        LineBuf {
            buf: std::mem::replace(&mut self.buf, fresh),
            range: start..newline,
            spares: Some(Arc::clone(&self.spares)),
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

    /// The current line is over the limit: drop it up to its newline, looking for its id on the way.
    fn skip_long_line(&mut self) -> io::Result<Line> {
        let mut finder = wire::IdFinder::new();
        let mut length = 0;
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                finder.feed(&self.buf[self.start..self.start + at]);
                length += at;
                self.start += at + 1;
                self.searched = self.start;
                break;
            }
            finder.feed(&self.buf[self.start..self.end]);
            length += self.end - self.start;
            self.start = self.end;
            self.searched = self.end;
            if self.eof {
                break;
            }
            self.fill()?;
        }
        self.shrink();
        Ok(Line::TooLong {
            id: finder.finish(),
            length,
        })
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
                Line::Message(l) => out.push(String::from_utf8(l.to_vec()).unwrap()),
                Line::TooLong { id, length } => out.push(format!("long {length} {id:?}")),
                Line::End => return out,
            }
        }
    }

    /// A writer that takes at most `step` bytes a call, through the default `write_vectored` (the first
    /// non-empty piece only) or its own (across pieces), and fails with `Interrupted` every third call.
    struct Choppy {
        out: Vec<u8>,
        step: usize,
        across: bool,
        calls: usize,
    }

    impl Write for Choppy {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let n = buf.len().min(self.step);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
            if !self.across {
                let first = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| &b[..]);
                return self.write(first);
            }
            self.calls += 1;
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(self.step - n);
                self.out.extend_from_slice(&b[..take]);
                n += take;
                if n == self.step {
                    break;
                }
            }
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Issue 16 item 1: an answer written in pieces arrives whole and in order, whatever each write
    /// takes (empty pieces, pieces split across writes, interrupted writes).
    #[test]
    fn a_line_in_pieces_is_written_whole_whatever_the_writes_take() {
        let pieces: [&[u8]; 5] = [
            b"{\"jsonrpc\":",
            b"",
            b"\"2.0\",\"id\":7",
            b"",
            b",\"result\":{}}\n",
        ];
        for step in [1, 2, 5, 64] {
            for across in [false, true] {
                let mut out = Choppy {
                    out: Vec::new(),
                    step,
                    across,
                    calls: 0,
                };
                write_all_vectored(&mut out, &pieces).unwrap();
                assert_eq!(out.out, pieces.concat(), "{step} {across}");
            }
        }
    }

    /// Issue 16 item 1: a long line takes the reader's buffer and the reader goes on in a spare one
    /// (the bytes after the line copied over); every line arrives intact, in order, whatever the
    /// reads, with the buffers recycled or not.
    #[test]
    fn long_lines_hand_over_their_buffer_and_the_reading_goes_on() {
        let sizes = [70_000, 3, 200_000, 65_536, 0, 1_000_000, 65_535, 131_072, 10];
        let line =
            |i: usize, n: usize| -> Vec<u8> { (0..n).map(|k| b'a' + ((k * 7 + i) % 26) as u8).collect() };
        let mut input = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            input.extend(line(i, n));
            input.push(b'\n');
        }
        for step in [7, 4096, CHUNK, 300_000, 1 << 22] {
            for recycle in [false, true] {
                let mut reader = LineReader::new(Box::new(Trickle(input.clone(), 0, step)));
                let mut handed_over = 0;
                for (i, &n) in sizes.iter().enumerate() {
                    let Line::Message(got) = reader.next_line().unwrap() else {
                        panic!("line {i} did not arrive");
                    };
                    assert!(*got == *line(i, n), "line {i} of {n} bytes, reads of {step}");
                    handed_over += usize::from(got.spares.is_some());
                    if recycle {
                        got.recycle();
                    }
                }
                assert!(matches!(reader.next_line().unwrap(), Line::End));
                assert!(handed_over > 0, "no long line took the buffer (reads of {step})");
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
                        format!("long {} None", wire::MAX_LINE + 10),
                        "z".to_owned()
                    ],
                    "{step}"
                );
            }
        }
    }
}
