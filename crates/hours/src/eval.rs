//! Evaluation: membership by wall clock, and the next change and previous end computed exactly
//! from the window boundaries and the zone's transitions.
//!
//! # How the search works
//!
//! Candidates for a local date *d* are the boundaries of the week plan that fall on *d*'s weekday, each
//! placed on the time line by looking the local date-time up in the zone (`offset_from_local_datetime`,
//! every one of its three answers handled explicitly, never a default disambiguation):
//!
//! - one answer: that instant;
//! - two answers (a fold): both instants, and the fold's transition instant, found by bisecting the
//!   zone's UTC offset between the two (this searches the zone data, not membership);
//! - no answer (a gap): the gap's transition instant, from `chrono_tz::GapInfo`.
//!
//! Membership is constant between consecutive candidates: the wall clock either runs without crossing a
//! boundary, or jumps at a transition over a range holding no boundary (a boundary inside the range
//! would have put the transition among the candidates). So the next change is the first candidate after
//! *t* whose membership differs from membership at *t*, and the previous end is the last candidate at or
//! before *t* with membership true one second before it.
//!
//! The wall clock never runs back by a whole day (the largest fold in the bundled data, 1900–2199, is
//! Kwajalein's 23 hours in 1969), and a candidate's local time is the wall clock at it (or just before
//! or after its transition). So the forward search visits boundaries in local order from one day before
//! the wall clock at *t* and stops one day past the wall clock at the best answer so far; the backward
//! search mirrors this. No fixed-interval stepping, no
//! eight-day horizon: the search gives up only after [`SEARCH_DAYS`] days.

use chrono::{DateTime, LocalResult, Offset, TimeZone, Utc};
use chrono_tz::{GapInfo, Tz};

use crate::error::ParseError;
use crate::expr::Expr;
use crate::zone::{self, DAY, day_of, offset_at, offset_at_secs, week_position};

/// How many days of local time a search covers before it reports `None`: 366 days away, and two
/// more for the one-day margins at both ends.
pub(crate) const SEARCH_DAYS: i64 = 368;

/// Operating hours you can keep: an expression bound to the zone it is evaluated in (its `TZ=` prefix
/// zone, else the default zone it was given). It owns its expression, so it is `Clone + Send + Sync +
/// 'static`: store it in your harness, share it between threads, and ask it at any instant whether
/// hours are open, when they next open or close, and when they last ended.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_hours::{Hours, Tz};
///
/// struct Harness {
///     hours: Hours, // no lifetime: the gate lives as long as the harness
/// }
/// let harness = Harness { hours: Hours::parse("TZ=America/New_York 01:30-02:30", Tz::UTC).unwrap() };
/// let t = Utc.with_ymd_and_hms(2026, 3, 8, 6, 59, 0).unwrap(); // 01:59 EST, spring-forward day
/// assert!(harness.hours.is_in(t));
/// // The window's end, 02:30, lies in the gap: hours end when the clock jumps to 03:00 EDT.
/// assert_eq!(harness.hours.next_close(t), Some(Utc.with_ymd_and_hms(2026, 3, 8, 7, 0, 0).unwrap()));
/// // They open again at 01:30 EDT the next day.
/// assert_eq!(harness.hours.next_open(t), Some(Utc.with_ymd_and_hms(2026, 3, 9, 5, 30, 0).unwrap()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hours {
    expr: Expr,
    tz: Tz,
}

/// Whether an instant is in hours and when that next changes, as [`Hours::check`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Check {
    /// Whether the instant is in hours.
    pub in_hours: bool,
    /// The next instant at which that changes, or `None` for an expression covering the whole week.
    pub next_change: Option<DateTime<Utc>>,
}

impl Hours {
    /// Binds `expr` to the zone it is evaluated in: its `TZ=` prefix zone when it has one (then
    /// `default_zone` is ignored), else `default_zone`. [`Expr::bind`] does the same from a borrowed
    /// expression, cloning it.
    ///
    /// ```
    /// use shiftwork_hours::{Expr, Hours, Tz};
    /// let plain = Hours::new(Expr::parse("Mon-Fri 09:00-17:30").unwrap(), Tz::Asia__Kolkata);
    /// assert_eq!(plain.zone_name(), "Asia/Kolkata");
    /// let prefixed = Hours::new(Expr::parse("TZ=US/Eastern 09:00-17:00").unwrap(), Tz::UTC);
    /// assert_eq!(prefixed.zone_name(), "US/Eastern"); // the prefix wins, spelt as written
    /// ```
    pub fn new(expr: Expr, default_zone: Tz) -> Hours {
        let tz = expr.prefix_zone().unwrap_or(default_zone);
        Hours { expr, tz }
    }

    /// Parses an expression ([`Expr::parse`]) and binds it as [`Hours::new`] does.
    ///
    /// ```
    /// use shiftwork_hours::{Hours, Tz};
    /// let hours = Hours::parse("Sat,Sun 10:00-14:00", Tz::Europe__Berlin).unwrap();
    /// assert_eq!(hours.expr().to_string(), "Sat 10:00-14:00; Sun 10:00-14:00");
    /// assert_eq!(Hours::parse("9:00-13:00", Tz::UTC).unwrap_err().to_string(),
    ///            r#"window "9:00-13:00": start time "9:00": malformed hour"#);
    /// ```
    pub fn parse(expression: &str, default_zone: Tz) -> Result<Hours, ParseError> {
        Ok(Hours::new(Expr::parse(expression)?, default_zone))
    }

    /// The expression.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The expression, giving up the binding.
    pub fn into_expr(self) -> Expr {
        self.expr
    }

    /// The evaluation zone.
    pub fn zone(&self) -> Tz {
        self.tz
    }

    /// The evaluation zone's name: the prefix's zone text as written, else the default zone's
    /// `Tz::name()`.
    ///
    /// ```
    /// use shiftwork_hours::Expr;
    /// let e = Expr::parse("TZ=US/Eastern 09:00-17:00").unwrap();
    /// assert_eq!(e.bind(chrono_tz::UTC).zone_name(), "US/Eastern");
    /// ```
    pub fn zone_name(&self) -> &str {
        self.expr.zone_text().unwrap_or(self.tz.name())
    }

    /// Whether `t` is in hours: its wall clock in the zone, truncated to the second, lies in a
    /// window (an overnight window's tail counted on the next day).
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::Expr;
    /// let e = Expr::parse("TZ=UTC Fri 22:00-02:00").unwrap();
    /// let z = e.bind(chrono_tz::UTC);
    /// assert!(z.is_in(Utc.with_ymd_and_hms(2026, 9, 26, 1, 59, 0).unwrap())); // Saturday, tail
    /// assert!(!z.is_in(Utc.with_ymd_and_hms(2026, 9, 26, 2, 0, 0).unwrap()));
    /// ```
    pub fn is_in(&self, t: DateTime<Utc>) -> bool {
        let local = t.timestamp() + offset_at(self.tz, &t);
        self.expr.plan().contains(week_position(local))
    }

    /// [`is_in`](Self::is_in) and [`next_change`](Self::next_change) together.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::Expr;
    /// let e = Expr::parse("TZ=UTC Mon-Fri 09:00-13:00").unwrap();
    /// let c = e.bind(chrono_tz::UTC).check(Utc.with_ymd_and_hms(2026, 9, 21, 12, 0, 0).unwrap());
    /// assert!(c.in_hours);
    /// assert_eq!(c.next_change, Some(Utc.with_ymd_and_hms(2026, 9, 21, 13, 0, 0).unwrap()));
    /// ```
    pub fn check(&self, t: DateTime<Utc>) -> Check {
        Check {
            in_hours: self.is_in(t),
            next_change: self.next_change(t),
        }
    }

    /// The smallest instant after `t` at which membership differs from membership at `t`,
    /// exact to the second. `None` when the expression covers the whole week, or (never with the bundled
    /// data) when no change lies within a year, or the search would leave chrono's range.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::Expr;
    /// // Friday evening in Los Angeles: the next change is Monday's opening.
    /// let e = Expr::parse("TZ=America/Los_Angeles Mon-Fri 09:00-13:00").unwrap();
    /// let t = Utc.with_ymd_and_hms(2026, 9, 26, 3, 0, 0).unwrap();
    /// assert_eq!(
    ///     e.bind(chrono_tz::UTC).next_change(t),
    ///     Some(Utc.with_ymd_and_hms(2026, 9, 28, 16, 0, 0).unwrap())
    /// );
    /// ```
    pub fn next_change(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.expr.covers_whole_week() {
            return None;
        }
        let plan = self.expr.plan();
        let ts = t.timestamp();
        let local = ts + offset_at(self.tz, &t);
        let here = plan.contains(week_position(local));
        // Boundaries are visited in local order over the open range (low, high); `high` shrinks to one
        // day past the wall clock of the best answer once there is one.
        let low = local - DAY;
        let mut high = low + SEARCH_DAYS * DAY;
        let mut best: Option<i64> = None;
        let mut day = day_of(low);
        'days: while day * DAY < high {
            for second in plan.boundaries_on(zone::weekday_of_day(day)) {
                let x = day * DAY + second;
                if x <= low {
                    continue;
                }
                if x >= high {
                    break 'days;
                }
                let placed = self.place(x, |c, wall| {
                    if c <= ts || best.is_some_and(|b| c >= b) {
                        return;
                    }
                    let Some((member, wall)) = self.state_with(c, wall) else {
                        return;
                    };
                    if member != here {
                        best = Some(c);
                        high = wall + DAY;
                    }
                });
                if !placed {
                    break 'days;
                }
            }
            day += 1;
        }
        best.and_then(|b| DateTime::from_timestamp(b, 0))
    }

    /// The next instant after `t` at which hours open: in hours there, and not one second before. Out
    /// of hours at `t` it is the next change; in hours, the opening after the coming close. Exact to
    /// the second across DST like [`next_change`](Self::next_change): a window starting in a gap opens
    /// when the clocks jump, and a window inside a fold opens on both passes. `None` when hours never
    /// open after `t`: an expression covering the whole week never closes, so it never opens again
    /// (and, never with the bundled zone data, when no opening lies within a year, or the search would
    /// leave chrono's range).
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::{Hours, Tz};
    /// let hours = Hours::parse("TZ=America/New_York Mon-Fri 09:00-17:00", Tz::UTC).unwrap();
    /// let friday_evening = Utc.with_ymd_and_hms(2026, 3, 6, 22, 0, 0).unwrap(); // 17:00 EST
    /// // Monday 09:00 is EDT: the clocks went forward on Sunday.
    /// let monday_nine = Utc.with_ymd_and_hms(2026, 3, 9, 13, 0, 0).unwrap();
    /// assert_eq!(hours.next_open(friday_evening), Some(monday_nine));
    /// // In hours on Monday, the next opening is Tuesday's.
    /// let tuesday_nine = Utc.with_ymd_and_hms(2026, 3, 10, 13, 0, 0).unwrap();
    /// assert_eq!(hours.next_open(monday_nine), Some(tuesday_nine));
    /// // Both passes of a fold open a window that lies inside it.
    /// let fold = Hours::parse("TZ=America/New_York 01:00-01:30", Tz::UTC).unwrap();
    /// let first_pass_end = Utc.with_ymd_and_hms(2026, 11, 1, 5, 30, 0).unwrap(); // 01:30 EDT
    /// assert_eq!(fold.next_open(first_pass_end), Some(Utc.with_ymd_and_hms(2026, 11, 1, 6, 0, 0).unwrap()));
    /// assert_eq!(Hours::parse("00:00-24:00", Tz::UTC).unwrap().next_open(friday_evening), None);
    /// ```
    pub fn next_open(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.next_flip_to(true, t)
    }

    /// The next instant after `t` at which hours close: out of hours there, and in hours one second
    /// before. In hours at `t` it is the next change; out of hours, the close after the coming
    /// opening. Exact across DST like [`next_open`](Self::next_open); `None` when hours never close
    /// after `t` (an expression covering the whole week).
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::{Hours, Tz};
    /// let hours = Hours::parse("TZ=Europe/London Mon-Fri 09:00-17:30", Tz::UTC).unwrap();
    /// let saturday = Utc.with_ymd_and_hms(2026, 3, 28, 12, 0, 0).unwrap();
    /// // Monday 17:30 is BST (UTC+1): the clocks went forward on Sunday.
    /// assert_eq!(hours.next_close(saturday), Some(Utc.with_ymd_and_hms(2026, 3, 30, 16, 30, 0).unwrap()));
    /// assert_eq!(Hours::parse("Mon-Sun 00:00-24:00", Tz::UTC).unwrap().next_close(saturday), None);
    /// ```
    pub fn next_close(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.next_flip_to(false, t)
    }

    /// The next flip after `t` into membership `to`: the next change when membership at `t` is the
    /// other one, else the change after it.
    fn next_flip_to(&self, to: bool, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let change = self.next_change(t)?;
        if self.is_in(t) != to {
            Some(change)
        } else {
            self.next_change(change)
        }
    }

    /// The largest in→out flip at or before `t`: the instant hours last ended. `None` when `t`
    /// is in hours, when the expression covers the whole week, or (never with the bundled data) when no
    /// end lies within a year before `t`.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_hours::Expr;
    /// let e = Expr::parse("TZ=UTC Mon-Fri 09:00-13:00").unwrap();
    /// let z = e.bind(chrono_tz::UTC);
    /// let closing = Utc.with_ymd_and_hms(2026, 9, 21, 13, 0, 0).unwrap();
    /// assert_eq!(z.prev_end(closing), Some(closing)); // exactly at the end
    /// assert_eq!(z.prev_end(closing + chrono::TimeDelta::seconds(1)), Some(closing));
    /// ```
    pub fn prev_end(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.expr.covers_whole_week() {
            return None;
        }
        let plan = self.expr.plan();
        let ts = t.timestamp();
        let local = ts + offset_at(self.tz, &t);
        if plan.contains(week_position(local)) {
            return None;
        }
        // Boundaries are visited in descending local order over the open range (low, high); `low`
        // rises to one day before the wall clock of the second before the best answer.
        let high = local + DAY;
        let mut low = high - SEARCH_DAYS * DAY;
        let mut best: Option<i64> = None;
        let mut day = day_of(high - 1);
        'days: while (day + 1) * DAY > low {
            for second in plan.boundaries_on(zone::weekday_of_day(day)).rev() {
                let x = day * DAY + second;
                if x >= high {
                    continue;
                }
                if x <= low {
                    break 'days;
                }
                let placed = self.place(x, |c, _| {
                    if c > ts || best.is_some_and(|b| c <= b) {
                        return;
                    }
                    let Some((member_before, wall_before)) = self.state_with(c - 1, None) else {
                        return;
                    };
                    if member_before {
                        best = Some(c);
                        low = wall_before - DAY;
                    }
                });
                if !placed {
                    break 'days;
                }
            }
            day -= 1;
        }
        best.and_then(|b| DateTime::from_timestamp(b, 0))
    }

    /// Membership and the wall clock (local seconds) at the whole second `ts`; `wall` when the caller
    /// already knows the wall clock there.
    fn state_with(&self, ts: i64, wall: Option<i64>) -> Option<(bool, i64)> {
        let wall = match wall {
            Some(w) => w,
            None => ts + offset_at_secs(self.tz, ts)?,
        };
        Some((self.expr.plan().contains(week_position(wall)), wall))
    }

    /// Places the local time `x` (local seconds) on the time line and calls `f` with each candidate
    /// instant and, when the lookup tells it, the wall clock there (every answer of the lookup
    /// handled explicitly, no default disambiguation). Returns `false` when chrono cannot represent `x`
    /// (the search ends there).
    fn place(&self, x: i64, mut f: impl FnMut(i64, Option<i64>)) -> bool {
        let Some(naive) = DateTime::from_timestamp(x, 0).map(|d| d.naive_utc()) else {
            return false;
        };
        let seconds = |o: <Tz as TimeZone>::Offset| i64::from(o.fix().local_minus_utc());
        match self.tz.offset_from_local_datetime(&naive) {
            // The span holding `x` also holds `x − offset` on the UTC line, so the wall clock there is `x`.
            LocalResult::Single(o) => f(x - seconds(o), Some(x)),
            LocalResult::Ambiguous(a, b) => {
                let (first, second) = (x - seconds(a), x - seconds(b));
                f(first, Some(x));
                f(second, Some(x));
                if let Some(transition) = self.transition_between(first.min(second), first.max(second)) {
                    f(transition, None);
                }
            }
            LocalResult::None => {
                if let Some(transition) = gap_transition(self.tz, &naive) {
                    f(transition, None);
                }
            }
        }
        true
    }

    /// The first second in `(lo, hi]` whose UTC offset differs from the offset at `lo`, by bisecting the
    /// zone's offset (the two passes of a fold lie in adjacent spans, so there is exactly one
    /// transition between them).
    fn transition_between(&self, mut lo: i64, mut hi: i64) -> Option<i64> {
        let before = offset_at_secs(self.tz, lo)?;
        if offset_at_secs(self.tz, hi)? == before {
            return None;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if offset_at_secs(self.tz, mid)? == before {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(hi)
    }
}

/// The transition instant of the gap holding the local time `naive`: the last second before the gap
/// on the local time line, minus the offset in force then, is the first instant after the gap.
fn gap_transition(tz: Tz, naive: &chrono::NaiveDateTime) -> Option<i64> {
    let gap = GapInfo::new(naive, &tz)?;
    match (gap.begin, gap.end) {
        (Some((begin, offset)), _) => {
            Some(begin.and_utc().timestamp() - i64::from(offset.fix().local_minus_utc()))
        }
        (None, Some(end)) => Some(end.with_timezone(&Utc).timestamp()),
        (None, None) => None,
    }
}
