//! How the facade's typed values are written in tool answers (the shapes of the MCP tools): an
//! instant as milliseconds since 1970-01-01 UTC, a window as whole seconds (`…_sec`), a wait as
//! milliseconds (`…_ms`). Used by the views' `Serialize` implementations only.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serializer;

/// An instant as milliseconds.
pub(crate) fn ms<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_i64(t.timestamp_millis())
}

/// An optional instant as milliseconds or `null`.
pub(crate) fn opt_ms<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_some(&t.timestamp_millis()),
        None => s.serialize_none(),
    }
}

/// A window as whole seconds.
pub(crate) fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

/// An optional window as whole seconds or `null`.
pub(crate) fn opt_secs<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs()),
        None => s.serialize_none(),
    }
}

/// An optional wait as milliseconds or `null`.
pub(crate) fn opt_duration_ms<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        None => s.serialize_none(),
    }
}

/// A wire name (`as_str`) of a closed set.
pub(crate) fn name<S: Serializer, T: Copy + Named>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.wire_name())
}

/// A closed set whose members have wire names.
pub(crate) trait Named {
    fn wire_name(self) -> &'static str;
}

impl Named for crate::fingerprint::RootReason {
    fn wire_name(self) -> &'static str {
        self.as_str()
    }
}

impl Named for crate::paths::PathReason {
    fn wire_name(self) -> &'static str {
        self.as_str()
    }
}
