//! Logging on stderr that never blocks a call.
//!
//! A log line is handed to one writer thread through a bounded queue; when the queue is full (nobody
//! reads stderr and its pipe is full) the line is dropped and counted, and the writer says how many
//! were dropped as soon as it can write again. `RUST_LOG` filters the lines (default `warn`).

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Lines waiting for stderr before new ones are dropped.
const QUEUE: usize = 1024;

/// Starts logging to stderr through the writer thread, at `RUST_LOG`'s levels (default `warn`), as
/// text. Returns false when a logger was already set.
pub fn init() -> bool {
    install("warn", crate::telemetry::LogFormat::Text, None)
}

/// Starts logging to stderr through the writer thread at `RUST_LOG`'s levels (`default` when it is
/// unset), in `format`, and — when `tracer` is given — every span of the `info` level and above as
/// an OpenTelemetry span. Returns false when a logger was already set.
pub fn install(
    default: &str,
    format: crate::telemetry::LogFormat,
    tracer: Option<&opentelemetry_sdk::trace::SdkTracerProvider>,
) -> bool {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::FilterExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let levels = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // The request's span carries for OpenTelemetry what its one log line says itself: the log does
    // not see it, so no line repeats the request's id, method or tool as span context.
    let filter = levels.and(tracing_subscriber::filter::filter_fn(|metadata| {
        !(metadata.is_span() && metadata.name() == "mcp.request")
    }));
    let queue = queue();
    let json = format == crate::telemetry::LogFormat::Json;
    let writer = move || LineWriter {
        queue: Arc::clone(queue),
        line: Vec::new(),
        json,
    };
    let fmt = match format {
        crate::telemetry::LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_ansi(false)
            .with_filter(filter)
            .boxed(),
        crate::telemetry::LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_writer(writer)
            .with_filter(filter)
            .boxed(),
    };
    let otel = tracer.map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("shiftwork-mcp"))
            .with_filter(tracing_subscriber::filter::LevelFilter::INFO)
    });
    tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .try_init()
        .is_ok()
}

/// Waits up to `timeout` for the queued lines to reach stderr (before the process exits).
pub fn flush(timeout: Duration) {
    let Some(queue) = QUEUE_CELL.get() else {
        return;
    };
    let deadline = Instant::now() + timeout;
    while (queue.pending.load(Ordering::SeqCst) > 0 || queue.dropped.load(Ordering::SeqCst) > 0)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The number of lines dropped since the last report (tests).
pub fn dropped() -> usize {
    QUEUE_CELL.get().map_or(0, |q| q.dropped.load(Ordering::SeqCst))
}

struct Queue {
    sender: SyncSender<Vec<u8>>,
    /// Lines queued and not yet written.
    pending: AtomicUsize,
    /// Lines dropped and not yet reported.
    dropped: AtomicUsize,
}

static QUEUE_CELL: OnceLock<Arc<Queue>> = OnceLock::new();

fn queue() -> &'static Arc<Queue> {
    QUEUE_CELL.get_or_init(|| {
        let (sender, receiver) = sync_channel(QUEUE);
        let queue = Arc::new(Queue {
            sender,
            pending: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
        });
        let writer = Arc::clone(&queue);
        let started = std::thread::Builder::new()
            .name(String::from("shiftwork-mcp-log"))
            .spawn(move || write_lines(&writer, &receiver));
        if started.is_err() {
            // No writer: every line counts as dropped, and nothing blocks.
            queue.dropped.fetch_add(1, Ordering::SeqCst);
        }
        queue
    })
}

/// The largest buffer of lines the writer keeps between two writes.
const KEPT_BATCH: usize = 256 * 1024;

/// How long the writer waits after a write before it looks at the queue again: the lines logged
/// meanwhile are written together, and their callers never wake it (a busy server logs a line a
/// request; a wake-up a line cost a request tens of microseconds on a loaded machine). At most this
/// late, and the queue holds [`QUEUE`] lines, so a line is dropped only past 200,000 lines a second.
const LINGER: Duration = Duration::from_millis(5);

/// The writer thread: writes the lines to stderr (blocking only itself) — the lines queued meanwhile
/// together, in one write, so a busy server makes one system call for many requests' lines — and
/// reports dropped lines. A line logged when the writer is idle is written at once.
fn write_lines(queue: &Queue, receiver: &Receiver<Vec<u8>>) {
    let stderr = std::io::stderr();
    let mut batch: Vec<u8> = Vec::new();
    let mut wrote = false;
    loop {
        if wrote {
            std::thread::sleep(LINGER);
        }
        let line = receiver.recv_timeout(Duration::from_millis(100));
        wrote = line.is_ok();
        let mut err = stderr.lock();
        if let Ok(line) = &line {
            batch.clear();
            batch.extend_from_slice(line);
            let mut lines = 1;
            // At most a queue's worth: the batch stays bounded while callers keep logging.
            while lines < QUEUE
                && let Ok(more) = receiver.try_recv()
            {
                batch.extend_from_slice(&more);
                lines += 1;
            }
            let _ = err.write_all(&batch);
            queue.pending.fetch_sub(lines, Ordering::SeqCst);
            if batch.capacity() > KEPT_BATCH {
                batch = Vec::new();
            }
        }
        let dropped = queue.dropped.swap(0, Ordering::SeqCst);
        if dropped > 0 {
            let _ = writeln!(
                err,
                "shiftwork-mcp: {dropped} log line(s) dropped: stderr was not read fast enough"
            );
        }
        if let Err(std::sync::mpsc::RecvTimeoutError::Disconnected) = line {
            return;
        }
    }
}

/// Collects one event's text; hands it to the queue when the event is done.
struct LineWriter {
    queue: Arc<Queue>,
    line: Vec<u8>,
    /// The line is a JSON object (`--log-format json`).
    json: bool,
}

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        if self.line.is_empty() {
            return;
        }
        // A logged value (a tool's name, a refusal's sentence) may hold control characters: the line
        // reaches a person, so they are escaped like every other text the binary prints — a JSON line
        // with JSON's own escapes, so it stays JSON.
        let text = String::from_utf8_lossy(&self.line);
        let escaped = if self.json {
            crate::terminal::json_for_people(&text)
        } else {
            crate::terminal::for_people(&text)
        };
        let line = match escaped {
            std::borrow::Cow::Borrowed(_) => std::mem::take(&mut self.line),
            std::borrow::Cow::Owned(escaped) => escaped.into_bytes(),
        };
        self.queue.pending.fetch_add(1, Ordering::SeqCst);
        match self.queue.sender.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.queue.pending.fetch_sub(1, Ordering::SeqCst);
                self.queue.dropped.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}
