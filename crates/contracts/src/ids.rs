//! Contract ids: a UUID version 7 from the dispatch instant and the random bits of an [`IdSource`].
//!
//! ```
//! use shiftwork_contracts::ids::{new_contract_id, IdSource, SeededIdSource};
//! let a = new_contract_id(1_767_225_600_000, &SeededIdSource::new(1));
//! let b = new_contract_id(1_767_225_600_000, &SeededIdSource::new(1));
//! assert_eq!(a, b); // same seed, same clock reading: same id
//! assert_eq!(a.as_str().len(), 36);
//! assert_eq!(&a.as_str()[14..15], "7"); // version 7
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::{ContractId, EpochMs};

/// Where the random bits of contract ids come from: the operating system ([`OsIdSource`]), or a seed
/// for tests that must give the same ids every run ([`SeededIdSource`]).
pub trait IdSource: Send + Sync {
    /// 80 bits, of which a UUIDv7 uses 74 (the version and variant bits are set by the crate).
    fn random_bits(&self) -> [u8; 10];
}

/// The operating system's random generator.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsIdSource;

impl IdSource for OsIdSource {
    fn random_bits(&self) -> [u8; 10] {
        let mut bytes = [0u8; 10];
        if getrandom::fill(&mut bytes).is_err() {
            // The OS generator failing is not a reason to refuse a dispatch: fall back to a generator
            // seeded from the process's hash keys; uniqueness still holds with overwhelming probability.
            let seed = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0u8);
            let s = SeededIdSource::new(seed);
            bytes = s.random_bits();
        }
        bytes
    }
}

/// A deterministic source for tests: the same seed gives the same sequence.
#[derive(Debug)]
pub struct SeededIdSource {
    state: AtomicU64,
}

impl SeededIdSource {
    /// A source seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SeededIdSource {
            state: AtomicU64::new(seed),
        }
    }

    fn next(&self) -> u64 {
        // splitmix64
        let mut z = self
            .state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl IdSource for SeededIdSource {
    fn random_bits(&self) -> [u8; 10] {
        let a = self.next().to_be_bytes();
        let b = self.next().to_be_bytes();
        let mut out = [0u8; 10];
        out[..8].copy_from_slice(&a);
        out[8..].copy_from_slice(&b[..2]);
        out
    }
}

/// A UUIDv7 in lowercase hyphenated form: 48-bit millisecond timestamp, version 7, 12 + 62 random
/// bits, variant `10`.
pub fn new_contract_id(now: EpochMs, ids: &dyn IdSource) -> ContractId {
    contract_id_from_bits(now, ids.random_bits())
}

/// The UUIDv7 of `now` and the random bits `r` (drawn once, before a store transaction, so that the
/// store's build closure stays pure).
pub fn contract_id_from_bits(now: EpochMs, r: [u8; 10]) -> ContractId {
    let ts = u64::try_from(now.max(0)).unwrap_or(0) & 0xFFFF_FFFF_FFFF;
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&ts.to_be_bytes()[2..]);
    b[6] = 0x70 | (r[0] & 0x0F);
    b[7] = r[1];
    b[8] = 0x80 | (r[2] & 0x3F);
    b[9..].copy_from_slice(&r[3..10]);
    let h = shiftwork_seams::hash::hex(&b);
    ContractId::generated(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ct18_ct124_uuid_v7_layout() {
        let id = new_contract_id(0x0123_4567_89ab, &SeededIdSource::new(7));
        let id = id.as_str();
        assert!(id.starts_with("01234567-89ab-7"), "{id}");
        let variant = u8::from_str_radix(&id[19..20], 16).unwrap();
        assert_eq!(variant & 0b1100, 0b1000);
        assert_eq!(id, id.to_ascii_lowercase());
        let other = new_contract_id(0x0123_4567_89ab, &OsIdSource);
        assert_ne!(id, other.as_str());
    }
}
