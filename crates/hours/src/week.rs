//! The week plan: the union of an expression's windows as sorted, disjoint arcs of the week, and the
//! boundary list where membership changes. Built once at parse time; membership is then one binary
//! search.

use crate::expr::Window;
use crate::zone::DAY;

/// Seconds in a week.
pub(crate) const WEEK: u32 = 7 * 86_400;

const DAY_U32: u32 = 86_400;

/// The week as covered by an expression. Positions are seconds after Monday 00:00 of the wall clock.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct WeekPlan {
    /// Sorted, disjoint, non-adjacent half-open arcs `[start, end)` inside `[0, WEEK]`.
    arcs: Vec<(u32, u32)>,
    /// Every position `p` where membership at `p` differs from membership at `p − 1 s` (circularly),
    /// sorted. Empty exactly when the expression covers the whole week.
    boundaries: Vec<u32>,
    /// `boundaries[day_start[d]..day_start[d + 1]]` are the boundaries on weekday `d` (Monday = 0).
    day_start: [usize; 8],
}

impl WeekPlan {
    /// The plan of a window list.
    pub(crate) fn new(windows: &[Window]) -> Self {
        let mut pieces: Vec<(u32, u32)> = Vec::with_capacity(windows.len() + 1);
        for w in windows {
            let base = w.day.num_days_from_monday() * DAY_U32;
            if w.is_overnight() {
                // Runs to the end of its day, then its tail on the next day (Sunday's on Monday).
                let tail_end = base + DAY_U32 + w.end;
                if tail_end <= WEEK {
                    pieces.push((base + w.start, tail_end));
                } else {
                    pieces.push((base + w.start, WEEK));
                    pieces.push((0, tail_end - WEEK));
                }
            } else {
                pieces.push((base + w.start, base + w.end));
            }
        }
        pieces.retain(|(a, b)| a < b);
        pieces.sort_unstable();
        let mut arcs: Vec<(u32, u32)> = Vec::with_capacity(pieces.len());
        for (a, b) in pieces {
            match arcs.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => arcs.push((a, b)),
            }
        }
        let mut plan = WeekPlan {
            arcs,
            boundaries: Vec::new(),
            day_start: [0; 8],
        };
        let mut points: Vec<u32> = plan
            .arcs
            .iter()
            .flat_map(|&(a, b)| [a % WEEK, b % WEEK])
            .collect();
        points.sort_unstable();
        points.dedup();
        points.retain(|&p| plan.contains(p) != plan.contains((p + WEEK - 1) % WEEK));
        plan.boundaries = points;
        for day in 0..8u32 {
            plan.day_start[day as usize] = plan.boundaries.partition_point(|&p| p < day * DAY_U32);
        }
        plan
    }

    /// Whether the wall-clock week position `p` (`0 ≤ p < WEEK`) is covered.
    pub(crate) fn contains(&self, p: u32) -> bool {
        let i = self.arcs.partition_point(|&(_, end)| end <= p);
        i < self.arcs.len() && self.arcs[i].0 <= p
    }

    /// Whether the windows cover every second of the week.
    pub(crate) fn covers_whole_week(&self) -> bool {
        self.boundaries.is_empty()
    }

    /// The boundaries on weekday `weekday` (Monday = 0), as seconds after that day's midnight.
    pub(crate) fn boundaries_on(&self, weekday: usize) -> impl DoubleEndedIterator<Item = i64> + '_ {
        let base = weekday as i64 * DAY;
        self.boundaries[self.day_start[weekday]..self.day_start[weekday + 1]]
            .iter()
            .map(move |&p| i64::from(p) - base)
    }
}
