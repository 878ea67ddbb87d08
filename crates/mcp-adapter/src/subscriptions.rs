//! Resource subscriptions: who wants to hear of which resource, and the one thread
//! that notices a change, whoever made it.
//!
//! A subscriber is a set of resource URIs and a sink for notification lines: a stdio session's
//! `resources/subscribe` (the versions with the `initialize` handshake) or a `subscriptions/listen`
//! request of 2026-07-28, on stdio or as an HTTP event stream. The [`Hub`] reads each subscribed
//! resource every [`POLL`] and tells the subscribers of a URI when its contents changed: a change
//! made by this server, a replica or another process on the same files or store is seen alike,
//! since the resource is read as a client would read it. A subscription's baseline is read when it
//! is made, so a change between the subscribe and the first poll is not lost.
//!
//! The thread runs only while someone listens. A sink that reports its receiver gone (a closed
//! pipe, an HTTP client that disconnected) ends its subscription. At most [`MAX_SUBSCRIBERS`]
//! subscribers, each of at most [`MAX_URIS`] URIs, are kept: the reads per poll stay bounded.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use crate::resources::Views;

/// How often each subscribed resource is read.
pub const POLL: Duration = Duration::from_millis(200);
/// The most subscribers at once (stdio sessions and listen streams together).
pub const MAX_SUBSCRIBERS: usize = 256;
/// The most URIs one subscriber follows.
pub const MAX_URIS: usize = 64;
/// The most subscribers of one authenticated agent (an HTTP caller's listen streams), so that one
/// identity cannot take every place.
pub const MAX_PER_AGENT: usize = 16;

/// Where a subscriber's notifications go: `Some(line)` sends one JSON-RPC line, `None` only asks;
/// either answers `false` when the receiver is gone (the subscription then ends).
pub type Sink = Arc<dyn Fn(Option<&[u8]>) -> bool + Send + Sync>;

/// Why a subscription was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubscribeError {
    /// The server already keeps [`MAX_SUBSCRIBERS`], or the subscriber [`MAX_URIS`].
    #[error(
        "too many subscriptions: at most {MAX_SUBSCRIBERS} subscribers of at most {MAX_URIS} resources each"
    )]
    Full,
    /// The agent already has [`MAX_PER_AGENT`] subscribers.
    #[error("too many subscriptions of this agent: at most {MAX_PER_AGENT} listen at once")]
    AgentFull,
}

/// The subscribers and the thread that watches for them.
pub struct Hub {
    views: Arc<Views>,
    state: Mutex<State>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("subscribers", &self.state().subscribers.len())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    next: u64,
    subscribers: Vec<Subscriber>,
    /// The fingerprint of each followed URI's contents when last read.
    seen: HashMap<String, u64>,
    running: bool,
}

struct Subscriber {
    id: u64,
    uris: Vec<String>,
    /// The `subscriptions/listen` request's id (its JSON token), for `_meta`'s subscription id.
    listen: Option<String>,
    /// The authenticated agent it is of (over HTTP), for [`MAX_PER_AGENT`].
    agent: Option<String>,
    sink: Sink,
}

impl Hub {
    /// A hub reading `views`.
    pub fn new(views: Arc<Views>) -> Arc<Hub> {
        Arc::new(Hub {
            views,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new subscriber of `uris` (each one a resource the views serve), notified through `sink`;
    /// `listen` is the id token of its `subscriptions/listen` request, `agent` the agent its
    /// credentials authenticated. Returns its handle.
    pub fn subscribe(
        self: &Arc<Self>,
        uris: Vec<String>,
        listen: Option<String>,
        agent: Option<&str>,
        sink: Sink,
    ) -> Result<u64, SubscribeError> {
        if uris.len() > MAX_URIS {
            return Err(SubscribeError::Full);
        }
        let baselines: Vec<(String, u64)> = uris.iter().map(|u| (u.clone(), self.fingerprint(u))).collect();
        if let Some(agent) = agent {
            // A stream its client closed a moment ago does not count against the agent.
            self.prune(|s| s.agent.as_deref() == Some(agent));
        }
        let mut state = self.state();
        if let Some(agent) = agent
            && state
                .subscribers
                .iter()
                .filter(|s| s.agent.as_deref() == Some(agent))
                .count()
                >= MAX_PER_AGENT
        {
            return Err(SubscribeError::AgentFull);
        }
        if state.subscribers.len() >= MAX_SUBSCRIBERS {
            return Err(SubscribeError::Full);
        }
        for (uri, print) in baselines {
            state.seen.entry(uri).or_insert(print);
        }
        state.next += 1;
        let id = state.next;
        state.subscribers.push(Subscriber {
            id,
            uris,
            listen,
            agent: agent.map(str::to_owned),
            sink,
        });
        self.start(&mut state);
        Ok(id)
    }

    /// Ends the subscribers `which` picks whose receivers are gone.
    fn prune(&self, which: impl Fn(&Subscriber) -> bool) {
        let sinks: Vec<(u64, Sink)> = self
            .state()
            .subscribers
            .iter()
            .filter(|s| which(s))
            .map(|s| (s.id, Arc::clone(&s.sink)))
            .collect();
        for (id, sink) in sinks {
            if !sink(None) {
                self.unsubscribe(id);
            }
        }
    }

    /// Adds `uri` to subscriber `id` (a second `resources/subscribe`); `false` when it has no room.
    pub fn add(self: &Arc<Self>, id: u64, uri: &str) -> bool {
        let print = self.fingerprint(uri);
        let mut state = self.state();
        let Some(subscriber) = state.subscribers.iter_mut().find(|s| s.id == id) else {
            return false;
        };
        if subscriber.uris.iter().any(|u| u == uri) {
            return true;
        }
        if subscriber.uris.len() >= MAX_URIS {
            return false;
        }
        subscriber.uris.push(uri.to_owned());
        state.seen.entry(uri.to_owned()).or_insert(print);
        self.start(&mut state);
        true
    }

    /// Removes `uri` from subscriber `id` (`resources/unsubscribe`).
    pub fn remove(&self, id: u64, uri: &str) {
        let mut state = self.state();
        if let Some(subscriber) = state.subscribers.iter_mut().find(|s| s.id == id) {
            subscriber.uris.retain(|u| u != uri);
        }
        forget_unfollowed(&mut state);
    }

    /// Ends subscriber `id` (its listen request was cancelled, its session ended).
    pub fn unsubscribe(&self, id: u64) {
        let mut state = self.state();
        state.subscribers.retain(|s| s.id != id);
        forget_unfollowed(&mut state);
    }

    /// Ends every subscription (the server stops): each listen stream's sink is dropped, so its
    /// stream ends.
    pub fn close_all(&self) {
        let mut state = self.state();
        state.subscribers.clear();
        state.seen.clear();
    }

    /// How many subscribers are kept.
    pub fn subscribers(&self) -> usize {
        self.state().subscribers.len()
    }

    /// Starts the watching thread unless it runs.
    fn start(self: &Arc<Self>, state: &mut State) {
        if state.running {
            return;
        }
        let hub = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name(String::from("resource-watch"))
            .spawn(move || hub.watch());
        match spawned {
            Ok(_) => state.running = true,
            Err(e) => tracing::warn!("resource subscriptions will not be notified: no thread to watch: {e}"),
        }
    }

    /// Reads every followed resource each [`POLL`] and notifies on a change, until nobody listens.
    fn watch(&self) {
        loop {
            std::thread::sleep(POLL);
            // A receiver gone (a client that disconnected) ends its subscription now, not at the
            // next change.
            self.prune(|_| true);
            let uris: Vec<String> = {
                let mut state = self.state();
                if state.subscribers.is_empty() {
                    state.running = false;
                    return;
                }
                state.seen.keys().cloned().collect()
            };
            for uri in uris {
                let print = self.fingerprint(&uri);
                let sinks: Vec<(u64, Option<String>, Sink)> = {
                    let mut state = self.state();
                    match state.seen.get_mut(&uri) {
                        Some(seen) if *seen != print => *seen = print,
                        _ => continue,
                    }
                    state
                        .subscribers
                        .iter()
                        .filter(|s| s.uris.contains(&uri))
                        .map(|s| (s.id, s.listen.clone(), Arc::clone(&s.sink)))
                        .collect()
                };
                let mut gone = Vec::new();
                for (id, listen, sink) in sinks {
                    if !sink(Some(&updated_line(&uri, listen.as_deref()))) {
                        gone.push(id);
                    }
                }
                for id in gone {
                    self.unsubscribe(id);
                }
            }
        }
    }

    /// A fingerprint of the resource's contents now (its refusal's, when it cannot be read).
    fn fingerprint(&self, uri: &str) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        match self.views.read(uri) {
            Ok(contents) => contents.text.hash(&mut hasher),
            Err(e) => e.to_string().hash(&mut hasher),
        }
        hasher.finish()
    }
}

/// Drops the fingerprints of URIs nobody follows any more.
fn forget_unfollowed(state: &mut State) {
    let followed: std::collections::HashSet<&String> =
        state.subscribers.iter().flat_map(|s| s.uris.iter()).collect();
    let keep: Vec<String> = state
        .seen
        .keys()
        .filter(|u| followed.contains(u))
        .cloned()
        .collect();
    state.seen.retain(|u, _| keep.contains(u));
}

/// The `subscriptionId` member of a listen stream's `_meta`, from its request's id token.
fn subscription_meta(listen: &str) -> Value {
    let id: Value = serde_json::from_str(listen).unwrap_or(Value::Null);
    json!({"io.modelcontextprotocol/subscriptionId": id})
}

/// A `notifications/resources/updated` line for `uri`; on a listen stream it names the stream.
pub fn updated_line(uri: &str, listen: Option<&str>) -> Vec<u8> {
    let mut params = json!({"uri": uri});
    if let (Some(listen), Some(map)) = (listen, params.as_object_mut()) {
        map.insert(String::from("_meta"), subscription_meta(listen));
    }
    notification_line("notifications/resources/updated", params)
}

/// The `notifications/subscriptions/acknowledged` line opening a listen stream: the subset of the
/// filter accepted (the resources that exist; no list ever changes while a server runs).
pub fn acknowledged_line(listen: &str, accepted: &[String]) -> Vec<u8> {
    let mut notifications = serde_json::Map::new();
    if !accepted.is_empty() {
        notifications.insert(String::from("resourceSubscriptions"), json!(accepted));
    }
    notification_line(
        "notifications/subscriptions/acknowledged",
        json!({"notifications": notifications, "_meta": subscription_meta(listen)}),
    )
}

fn notification_line(method: &str, params: Value) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "method": method, "params": params})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}
