//! Integration tests of `seams`: the clock doubles, `MemFs`'s model (checked against `OsFs` by a property
//! test), the durable replace under fault injection at every step, and the lock across processes.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod clock;
mod create_dir_all;
mod durable;
mod host;
mod lock;
mod lock_file;
mod memfs;
mod model;
mod regular;
