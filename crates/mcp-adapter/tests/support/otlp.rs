//! Collectors for the telemetry tests (included with `#[path]` by the tests that need them): a real
//! OTLP/HTTP receiver whose request bodies are decoded with the official `opentelemetry-proto`
//! messages, and a black-holed collector that accepts connections and never answers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// The request bodies a receiver got, with their paths.
type Bodies = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver: every request body it got, by path.
pub struct Receiver {
    port: u16,
    bodies: Bodies,
}

impl Receiver {
    /// Listens on a port of the system's choice and answers 200 to every request.
    pub fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        Receiver { port, bodies }
    }

    /// `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every trace export received.
    pub fn traces(&self) -> Vec<ExportTraceServiceRequest> {
        self.of("/v1/traces")
            .iter()
            .map(|b| ExportTraceServiceRequest::decode(b.as_slice()).unwrap())
            .collect()
    }

    /// Every metrics export received.
    pub fn metrics(&self) -> Vec<ExportMetricsServiceRequest> {
        self.of("/v1/metrics")
            .iter()
            .map(|b| ExportMetricsServiceRequest::decode(b.as_slice()).unwrap())
            .collect()
    }

    /// Every span received.
    pub fn spans(&self) -> Vec<Span> {
        self.traces()
            .into_iter()
            .flat_map(|t| t.resource_spans)
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    /// Waits up to 20 s for `ready` to hold of what was received.
    pub fn wait_for(&self, what: &str, ready: impl Fn(&Receiver) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready(self) {
            assert!(Instant::now() < deadline, "the receiver never got {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The points of the histogram `name` as the last export that carried each attribute set gave
    /// them (the exports are cumulative): attribute set → count.
    pub fn histogram_counts(&self, name: &str) -> BTreeMap<Vec<(String, String)>, u64> {
        let mut counts = BTreeMap::new();
        for export in self.metrics() {
            let metrics = export
                .resource_metrics
                .into_iter()
                .flat_map(|r| r.scope_metrics)
                .flat_map(|s| s.metrics)
                .filter(|m| m.name == name);
            for metric in metrics {
                if let Some(Data::Histogram(histogram)) = metric.data {
                    for point in histogram.data_points {
                        counts.insert(attributes(&point.attributes), point.count);
                    }
                }
            }
        }
        counts
    }

    fn of(&self, path: &str) -> Vec<Vec<u8>> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, b)| b.clone())
            .collect()
    }
}

/// Reads HTTP/1.1 requests with a Content-Length body off one connection and answers 200 to each.
fn serve(stream: TcpStream, seen: &Mutex<Vec<(String, Vec<u8>)>>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        seen.lock().unwrap().push((path, body));
        if writer
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
            )
            .is_err()
        {
            return;
        }
    }
}

/// A collector that accepts every connection, reads what is sent and never answers: an exporter
/// pointed at it waits until its own time limit.
pub struct BlackHole {
    port: u16,
    /// How many connections it accepted.
    pub accepted: Arc<Mutex<usize>>,
}

impl BlackHole {
    /// Listens on a port of the system's choice.
    pub fn start() -> BlackHole {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(Mutex::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                *count.lock().unwrap() += 1;
                // Read (so the sender's writes complete) and never write a byte back.
                std::thread::spawn(move || {
                    let mut sink = [0u8; 4096];
                    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
                });
            }
        });
        BlackHole { port, accepted }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// The value of attribute `key`.
pub fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a AnyValue> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

/// A string value.
pub fn string(value: Option<&AnyValue>) -> Option<&str> {
    match value {
        Some(AnyValue::StringValue(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// Every string attribute as (key, value), sorted by key.
pub fn attributes(attributes: &[KeyValue]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = attributes
        .iter()
        .filter_map(|kv| {
            string(kv.value.as_ref().and_then(|v| v.value.as_ref())).map(|v| (kv.key.clone(), v.to_owned()))
        })
        .collect();
    all.sort();
    all
}

/// Bytes as lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
