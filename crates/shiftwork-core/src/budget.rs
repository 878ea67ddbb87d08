//! `job.budget`: spent, reserved and remaining figures from one ledger pass, the plan's
//! `budget` report and the clock-in gate.

use crate::json::{Json, Node};
use crate::ledger::LedgerSummary;
use crate::refusal::ShiftworkRefusal;
use crate::view::Checkpoint;

/// The tokens a unit is assumed to cost when no accounting line reports any.
pub const DEFAULT_PER_UNIT: i128 = 60_000;

/// The budget's dimensions as `job.budget` spells them.
#[deprecated(
    since = "0.2.0",
    note = "renamed to `BudgetDimension::ALL` (typed; `BudgetDimension::as_str` spells each)"
)]
pub const DIMENSIONS: [&str; 2] = ["tokens", "units"];

/// A dimension a job's budget limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BudgetDimension {
    /// Tokens spent (the accounting lines' `tokens`).
    Tokens,
    /// Units clocked out (one per counted accounting line).
    Units,
}

impl BudgetDimension {
    /// Both dimensions, in the order `tokens`, `units`.
    pub const ALL: [BudgetDimension; 2] = [BudgetDimension::Tokens, BudgetDimension::Units];

    /// The key in `job.budget`: `tokens` or `units`.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetDimension::Tokens => "tokens",
            BudgetDimension::Units => "units",
        }
    }
}

impl std::fmt::Display for BudgetDimension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The budget figures of a checkpoint with `job.budget`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Declared limits, in the order of [`BudgetDimension::ALL`].
    pub limits: Vec<(BudgetDimension, i128)>,
    /// Spent tokens (counted lines' whole-number `tokens`).
    pub spent_tokens: i128,
    /// Spent units (counted accounting lines).
    pub spent_units: i128,
    /// The in-flight unit ids, in plan order.
    pub in_flight: Vec<String>,
    /// The lower median of the counted tokens, or [`DEFAULT_PER_UNIT`].
    pub per_unit: i128,
}

/// `job.budget`'s declared limits, or `None` when the checkpoint declares no budget.
pub fn limits<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>) -> Option<Vec<(BudgetDimension, i128)>> {
    let budget = cp.budget()?;
    Some(
        BudgetDimension::ALL
            .iter()
            .filter_map(|dim| {
                let n = budget.get(dim.as_str())?.number()?.as_whole()?;
                Some((*dim, n))
            })
            .collect(),
    )
}

/// The in-flight units: non-terminal and briefed, in plan order.
pub fn in_flight<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, ledger: &LedgerSummary) -> Vec<&'d str> {
    cp.units()
        .zip(ledger.briefed.iter())
        .filter(|(u, briefed)| **briefed && !u.is_terminal())
        .map(|(u, _)| u.id())
        .collect()
}

impl Budget {
    /// The figures of `cp` (which must declare `job.budget`) over a ledger pass that kept tokens.
    pub fn compute<'d, N: Node<'d>>(cp: &Checkpoint<'d, N>, ledger: &LedgerSummary) -> Option<Budget> {
        let limits = limits(cp)?;
        let mut tokens = ledger.counted_tokens.clone();
        let per_unit = if tokens.is_empty() {
            DEFAULT_PER_UNIT
        } else {
            let k = (tokens.len() - 1) / 2;
            let (_, median, _) = tokens.select_nth_unstable(k);
            *median
        };
        Some(Budget {
            limits,
            spent_tokens: ledger.spent_tokens,
            spent_units: i128::from(ledger.spent_units),
            in_flight: in_flight(cp, ledger).into_iter().map(str::to_owned).collect(),
            per_unit,
        })
    }

    /// The cost of one unit in `dim`: 1 for units, `max(per_unit, 1)` for tokens.
    pub fn cost(&self, dim: BudgetDimension) -> i128 {
        match dim {
            BudgetDimension::Tokens => self.per_unit.max(1),
            BudgetDimension::Units => 1,
        }
    }

    /// Spent in `dim`.
    pub fn spent(&self, dim: BudgetDimension) -> i128 {
        match dim {
            BudgetDimension::Tokens => self.spent_tokens,
            BudgetDimension::Units => self.spent_units,
        }
    }

    /// Reserved by the in-flight units in `dim`.
    pub fn reserved(&self, dim: BudgetDimension) -> i128 {
        (self.in_flight.len() as i128).saturating_mul(self.cost(dim))
    }

    /// `limit − spent − reserved` (may be negative).
    pub fn remaining(&self, dim: BudgetDimension, limit: i128) -> i128 {
        limit
            .saturating_sub(self.spent(dim))
            .saturating_sub(self.reserved(dim))
    }

    /// How many more units fit: the minimum over declared dimensions of ⌊remaining / cost⌋, at least 0.
    pub fn affordable(&self) -> i128 {
        self.limits
            .iter()
            .map(|&(dim, limit)| self.remaining(dim, limit).div_euclid(self.cost(dim)))
            .min()
            .unwrap_or(0)
            .max(0)
    }

    /// The clock-in gate: the refusal when a new brief does not fit. `relaunch` is true
    /// when the selected unit is already in flight (it costs nothing new).
    pub fn admit(&self, relaunch: bool) -> Result<(), ShiftworkRefusal> {
        for &(dim, limit) in &self.limits {
            let used = self.spent(dim).saturating_add(self.reserved(dim));
            let cost = if relaunch { 0 } else { self.cost(dim) };
            if used.saturating_add(cost) > limit {
                return Err(ShiftworkRefusal::BudgetSpent {
                    dimension: dim,
                    used,
                    limit,
                });
            }
        }
        Ok(())
    }
}

/// An integer JSON value of any size.
pub(crate) fn int(v: i128) -> Json {
    match i64::try_from(v) {
        Ok(i) => Json::int(i),
        Err(_) => Json::Number(crate::json::Number::BigInt(v.to_string().into())),
    }
}
