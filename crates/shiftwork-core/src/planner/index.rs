//! The index from node id to input position that resolves every dependency: an open-addressed
//! table of positions, built once the number of ids is known, so it never grows.
//!
//! A general hash map cost the planner more than the rest of its work on large graphs: each lookup
//! hashed through a trait object of `str`, compared keys through `memcmp`, and loaded a 24-byte entry.
//! Here a slot is a position and 32 bits of the id's hash; the id itself is compared only when those
//! bits match, word by word when it is short (ids usually are).

use std::hash::BuildHasher;

use foldhash::fast::RandomState;

/// A slot's position, stored plus one (0: an empty slot): 32 bits, so that a slot with its hash bits
/// is 8 bytes, unless there are 2^32 - 1 ids or more.
pub(super) trait Slot: Copy + Default + PartialEq {
    /// `position + 1`, when it fits.
    fn of(position: usize) -> Option<Self>;
    /// The position stored in an occupied slot.
    fn position(self) -> usize;
}

impl Slot for u32 {
    fn of(position: usize) -> Option<Self> {
        u32::try_from(position).ok()?.checked_add(1)
    }

    fn position(self) -> usize {
        self as usize - 1
    }
}

impl Slot for usize {
    fn of(position: usize) -> Option<Self> {
        position.checked_add(1)
    }

    fn position(self) -> usize {
        self - 1
    }
}

/// Maps each distinct id of a list to its first position (the list is given again to each lookup).
pub(super) struct IdIndex<P> {
    /// The position, and the hash bits of the id there.
    slots: Vec<(P, u32)>,
    mask: usize,
    hasher: RandomState,
}

impl<P: Slot> IdIndex<P> {
    /// The index of `ids`, and the position of the first id an earlier one already has; `None` when
    /// a position does not fit `P`.
    pub(super) fn build(ids: &[&str]) -> Option<(Self, Option<usize>)> {
        P::of(ids.len())?;
        // At most half full, so a probe ends after a slot or two.
        let size = ids.len().saturating_mul(2).next_power_of_two().max(16);
        let mut index = IdIndex {
            slots: vec![(P::default(), 0); size],
            mask: size - 1,
            hasher: RandomState::default(),
        };
        let mut duplicate = None;
        for (i, id) in ids.iter().enumerate() {
            let (hash, mut at) = index.start(id);
            loop {
                let (slot, bits) = index.slots[at];
                if slot == P::default() {
                    index.slots[at] = (P::of(i)?, hash);
                    break;
                }
                if bits == hash && same(ids[slot.position()], id) {
                    duplicate = duplicate.or(Some(i));
                    break;
                }
                at = (at + 1) & index.mask;
            }
        }
        Some((index, duplicate))
    }

    /// The first position of `id` in `ids` (the list the index was built from), if it is there.
    #[inline]
    pub(super) fn get(&self, ids: &[&str], id: &str) -> Option<usize> {
        let (hash, mut at) = self.start(id);
        loop {
            let (slot, bits) = self.slots[at];
            if slot == P::default() {
                return None;
            }
            if bits == hash && same(ids[slot.position()], id) {
                return Some(slot.position());
            }
            at = (at + 1) & self.mask;
        }
    }

    /// The hash bits kept for `id` and the slot its probe starts at.
    #[inline]
    fn start(&self, id: &str) -> (u32, usize) {
        let hash = self.hasher.hash_one(id.as_bytes());
        ((hash >> 32) as u32, hash as usize & self.mask)
    }
}

/// Whether two ids are equal: up to 16 bytes in two overlapping word compares, longer ones as slices.
#[inline]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let words = |x: &[u8]| -> Option<(u64, u64)> {
        match (x.first_chunk::<8>(), x.last_chunk::<8>()) {
            (Some(head), Some(tail)) if x.len() <= 16 => {
                Some((u64::from_le_bytes(*head), u64::from_le_bytes(*tail)))
            }
            (Some(_), _) => None,
            (None, _) => match (x.first_chunk::<4>(), x.last_chunk::<4>()) {
                (Some(head), Some(tail)) => Some((
                    u64::from(u32::from_le_bytes(*head)),
                    u64::from(u32::from_le_bytes(*tail)),
                )),
                _ => Some((x.iter().fold(0, |w, &byte| w << 8 | u64::from(byte)), 0)),
            },
        }
    };
    match (words(a), words(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index answers as a linear search for the first equal id does, for ids of every length
    /// class (under 4, 4 to 7, 8 to 16 and longer bytes), duplicates and absent ids included.
    #[test]
    fn the_index_finds_the_first_position_of_each_id() {
        proptest::proptest!(|(ids in proptest::collection::vec("[ab]{0,3}|[ab]{4,7}|[ab]{8,16}|[ab]{17,20}", 0..60), probes in proptest::collection::vec("[ab]{0,20}", 0..20))| {
            let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
            let (index, duplicate) = IdIndex::<u32>::build(&ids).unwrap();
            let first = |id: &str| ids.iter().position(|x| *x == id);
            let expected_duplicate = (0..ids.len()).find(|&i| first(ids[i]) != Some(i));
            proptest::prop_assert_eq!(duplicate, expected_duplicate);
            for id in ids.iter().copied().chain(probes.iter().map(String::as_str)) {
                proptest::prop_assert_eq!(index.get(&ids, id), first(id), "{}", id);
            }
        });
    }
}
