//! Benchmarks of `seams`: the durable replace of a 1 MB file and streaming SHA-256 throughput, on the
//! real filesystem (`OsFs`, in a temporary directory).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use divan::{Bencher, counter::BytesCount};
use shiftwork_seams::durable::{ReplaceOptions, replace_durably};
use shiftwork_seams::hash::sha256_file;
use shiftwork_seams::{MemFs, OsFs};

fn main() {
    divan::main();
}

const MB: usize = 1024 * 1024;

fn fixture(len: usize) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();
    (dir, path, bytes)
}

/// Temp file, write, fsync, rename, fsync of the directory: the cost every durable write pays.
#[divan::bench(sample_count = 30)]
fn durable_replace_1mb_osfs(bencher: Bencher<'_, '_>) {
    let (_dir, path, bytes) = fixture(MB);
    let opts = ReplaceOptions::hidden(".bench-", ".tmp");
    bencher
        .counter(BytesCount::new(MB))
        .bench_local(|| replace_durably(&OsFs, &path, &[&bytes], &opts).unwrap());
}

/// The same sequence on `MemFs`: the cost of the mechanism without the disk.
#[divan::bench(sample_count = 100)]
fn durable_replace_1mb_memfs(bencher: Bencher<'_, '_>) {
    let fs = MemFs::new();
    let bytes = vec![7u8; MB];
    fs.write_file("/d/data.bin", &bytes);
    let opts = ReplaceOptions::hidden(".bench-", ".tmp");
    let path = PathBuf::from("/d/data.bin");
    bencher
        .counter(BytesCount::new(MB))
        .bench_local(|| replace_durably(&fs, &path, &[&bytes], &opts).unwrap());
}

/// Streaming SHA-256 of a 64 MB file (page cache warm).
#[divan::bench(sample_count = 10)]
fn sha256_64mb_osfs(bencher: Bencher<'_, '_>) {
    let (_dir, path, _) = fixture(64 * MB);
    bencher
        .counter(BytesCount::new(64 * MB))
        .bench_local(|| sha256_file(&OsFs, &path, &mut |_| ()).unwrap());
}
