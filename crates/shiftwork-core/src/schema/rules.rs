//! The embedded checkpoint schema as code: one pass over a document ([`Node`]: a built [`Json`] or a
//! [`crate::json::Tape`]) that finds the violation 0.36.2 reports without building anything
//! but its path, in O(document) time and O(depth) memory however many violations a document holds.
//!
//! It is the reader's validator and the writer's (a clock-out validates the document it is about to
//! write). A property test holds it to
//! the generic draft 2020-12 validator (the `jsonschema` crate) on `CHECKPOINT_SCHEMA`: the same
//! verdict, the same path and the same sentence. Where two violations sit at one path, the
//! first in that validator's keyword order is reported: `type`, `const`, `enum`, `minimum`,
//! `minLength`, `maxLength`, `minItems`, `maxItems`, `minProperties`, `required`,
//! `additionalProperties`, `propertyNames`, `anyOf`, `if`/`then`.

use std::cmp::Ordering;

use crate::json::{Kind, Node};

use super::{CLIP_VALUE, PathSegment, Quote, SchemaViolation};

/// What a violation broke, with the schema's own values (never the document's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rule {
    /// `type`: the JSON type expected (`object`, `string`, `array`, `integer`, `boolean`).
    Type(&'static str),
    /// `const: 1` (`version`).
    One,
    /// `enum`: the allowed strings.
    Enum(&'static [&'static str]),
    /// `minimum`.
    Minimum(i64),
    /// `minLength: 1`, `minItems: 1` or `minProperties: 1`.
    NonEmpty,
    /// `maxLength` or `maxItems`.
    TooLong,
    /// `required`: the first missing key, in `required` order.
    Required(&'static str),
    /// `additionalProperties: false`: how many keys the object may not carry.
    Additional(usize),
    /// `propertyNames: {enum}` (`job.roles`): the allowed names.
    PropertyName(&'static [&'static str]),
    /// `anyOf` (the `Question` items), no branch chosen.
    AnyOf,
}

/// The detail of a violation of `rule` at `at` (`allowed`: the keys a closed object may carry). Quoting, values
/// are rendered as Python renders them, as 0.36.2 does; not quoting, a detail names the rule and the
/// schema's values, never the document's (a refusal about a file quotes none of its
/// content).
pub(crate) fn detail<'d, N: Node<'d>>(rule: &Rule, at: N, allowed: &[&str], quote: Quote) -> String {
    let value = || match quote {
        Quote::Values => shiftwork_seams::echo::clip(&crate::json::python_repr(&at.to_json()), CLIP_VALUE),
        Quote::Nothing => String::from("the value"),
    };
    match rule {
        Rule::Type(t) => format!("{} is not of type '{t}'", value()),
        Rule::One => String::from("1 was expected"),
        Rule::Enum(options) => format!("{} is not one of {}", value(), options_text(options)),
        Rule::Minimum(m) => format!("{} is less than the minimum of {m}", value()),
        Rule::NonEmpty => format!("{} should be non-empty", value()),
        Rule::TooLong => format!("{} is too long", value()),
        Rule::Required(key) => format!("'{key}' is a required property"),
        Rule::Additional(count) => {
            let listed = match quote {
                Quote::Values => {
                    let mut keys: Vec<&str> = at
                        .members()
                        .map(|(k, _)| k)
                        .filter(|k| !allowed.contains(k))
                        .collect();
                    keys.sort_unstable();
                    let keys: Vec<String> = keys
                        .iter()
                        .map(|k| crate::json::python_string_literal(k))
                        .collect();
                    keys.join(", ")
                }
                Quote::Nothing => count.to_string(),
            };
            let verb = if *count == 1 { "was" } else { "were" };
            format!("Additional properties are not allowed ({listed} {verb} unexpected)")
        }
        Rule::PropertyName(options) => {
            let name = match quote {
                Quote::Values => at
                    .members()
                    .map(|(k, _)| k)
                    .find(|k| !options.contains(k))
                    .map(|k| shiftwork_seams::echo::clip(&crate::json::python_string_literal(k), CLIP_VALUE))
                    .unwrap_or_default(),
                Quote::Nothing => String::from("a property name"),
            };
            format!("{name} is not one of {}", options_text(options))
        }
        Rule::AnyOf => format!("{} is not valid under any of the given schemas", value()),
    }
}

fn options_text(options: &[&str]) -> String {
    let listed: Vec<String> = options.iter().map(|o| format!("'{o}'")).collect();
    format!("[{}]", listed.join(", "))
}

const STATUS: &[&str] = &["todo", "in_progress", "done", "blocked", "dropped"];
const ROLE: &[&str] = &["planner", "implementer", "reviewer"];

/// One step of a path while it is walked: keys are borrowed from the document or the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seg<'d> {
    Key(&'d str),
    Index(usize),
}

fn compare(a: &[Seg<'_>], b: &[Seg<'_>]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Seg::Key(x), Seg::Key(y)) => x.cmp(y),
            (Seg::Index(x), Seg::Index(y)) => x.cmp(y),
            (Seg::Index(_), Seg::Key(_)) => Ordering::Less,
            (Seg::Key(_), Seg::Index(_)) => Ordering::Greater,
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// A violation: where, what, and the value there (for a quoted detail).
#[derive(Debug, Clone)]
struct Found<'d, N> {
    path: Vec<Seg<'d>>,
    rule: Rule,
    at: N,
    /// The keys its object may carry (an `Additional` violation, for a quoted detail).
    allowed: &'static [&'static str],
}

/// The walk: where it is, and the violation to report so far.
struct Walk<'d, N> {
    path: Vec<Seg<'d>>,
    best: Option<Found<'d, N>>,
}

/// The checkpoint's violation to report, if any.
pub(crate) fn checkpoint<'d, N: Node<'d>>(doc: N, quote: Quote) -> Result<(), SchemaViolation> {
    let mut walk = Walk {
        path: Vec::new(),
        best: None,
    };
    walk.root(doc);
    match walk.best {
        None => Ok(()),
        Some(found) => Err(violation(found, quote)),
    }
}

fn violation<'d, N: Node<'d>>(found: Found<'d, N>, quote: Quote) -> SchemaViolation {
    let mut found = found;
    if found.rule == Rule::AnyOf
        && let Some((rel, rule, at)) = question_choice(found.at)
    {
        found.path.extend(rel);
        found.rule = rule;
        found.at = at;
        found.allowed = QUESTION_KEYS;
    }
    let path = found
        .path
        .iter()
        .map(|s| match s {
            Seg::Key(k) => PathSegment::Key((*k).to_owned()),
            Seg::Index(i) => PathSegment::Index(*i),
        })
        .collect();
    let detail = detail(&found.rule, found.at, found.allowed, quote);
    SchemaViolation { path, detail }
}

impl<'d, N: Node<'d>> Walk<'d, N> {
    /// Keeps the violation at the current path if it is the one to report so far: shallower, or as
    /// deep and greater; at the same path the first one found stays (evaluation order).
    fn report(&mut self, rule: Rule, at: N, allowed: &'static [&'static str]) {
        let better = match &self.best {
            None => true,
            Some(b) => match self.path.len().cmp(&b.path.len()) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => compare(&self.path, &b.path) == Ordering::Greater,
            },
        };
        if better {
            self.best = Some(Found {
                path: self.path.clone(),
                rule,
                at,
                allowed,
            });
        }
    }

    /// Whether a violation one level below the current path could still be reported.
    fn deeper_matters(&self) -> bool {
        self.best.as_ref().is_none_or(|b| self.path.len() < b.path.len())
    }

    fn at(&mut self, seg: Seg<'d>, value: N, check: impl FnOnce(&mut Self, N)) {
        if !self.deeper_matters() {
            return;
        }
        self.path.push(seg);
        check(self, value);
        self.path.pop();
    }

    /// `type: string, minLength: 1` (`$defs/text`).
    fn text(&mut self, v: N) {
        match v.as_str() {
            None => self.report(Rule::Type("string"), v, &[]),
            Some("") => self.report(Rule::NonEmpty, v, &[]),
            Some(_) => {}
        }
    }

    /// `type: string`.
    fn string(&mut self, v: N) {
        if v.kind() != Kind::String {
            self.report(Rule::Type("string"), v, &[]);
        }
    }

    fn boolean(&mut self, v: N) {
        if v.kind() != Kind::Bool {
            self.report(Rule::Type("boolean"), v, &[]);
        }
    }

    /// `enum` of strings.
    fn one_of(&mut self, v: N, options: &'static [&'static str]) {
        if !v.as_str().is_some_and(|s| options.contains(&s)) {
            self.report(Rule::Enum(options), v, &[]);
        }
    }

    /// `type: array` with `maxItems` (when given) and `items`.
    fn array(&mut self, v: N, max: Option<usize>, min_one: bool, item: impl Fn(&mut Self, N)) {
        if v.kind() != Kind::Array {
            self.report(Rule::Type("array"), v, &[]);
            return;
        }
        if min_one && v.items().next().is_none() {
            self.report(Rule::NonEmpty, v, &[]);
        }
        if let Some(max) = max
            && v.items().nth(max).is_some()
        {
            self.report(Rule::TooLong, v, &[]);
        }
        for (i, x) in v.items().enumerate() {
            if !self.deeper_matters() {
                break;
            }
            self.at(Seg::Index(i), x, &item);
        }
    }

    /// `$defs/texts`.
    fn texts(&mut self, v: N) {
        self.array(v, None, false, Self::text);
    }

    /// An object with `properties` (`keys`), whose first `required` keys are required and which, when
    /// `closed`, carries no other key (`additionalProperties: false`): `member` checks the member whose
    /// key is `keys[i]`.
    fn object(
        &mut self,
        v: N,
        keys: &'static [&'static str],
        required: usize,
        closed: bool,
        member: impl Fn(&mut Self, usize, N),
    ) {
        if v.kind() != Kind::Object {
            self.report(Rule::Type("object"), v, &[]);
            return;
        }
        let mut present = 0u32;
        let mut unexpected = 0usize;
        for (key, value) in v.members() {
            let Some(i) = keys.iter().position(|k| *k == key) else {
                unexpected += 1;
                continue;
            };
            present |= 1 << i;
            if self.deeper_matters() {
                self.path.push(Seg::Key(key));
                member(self, i, value);
                self.path.pop();
            }
        }
        if let Some(missing) = (0..required).find(|i| present & (1 << i) == 0) {
            self.report(Rule::Required(keys[missing]), v, &[]);
        }
        if closed && unexpected > 0 {
            self.report(Rule::Additional(unexpected), v, keys);
        }
    }

    fn root(&mut self, doc: N) {
        const KEYS: &[&str] = &["version", "job", "plan", "state", "history", "retro", "handoff"];
        self.object(doc, KEYS, 7, true, |w, i, v| match i {
            0 => {
                if v.number().is_none_or(|n| n.as_f64() != 1.0) {
                    w.report(Rule::One, v, &[]);
                }
            }
            1 => w.job(v),
            2 => w.plan(v),
            3 => w.state(v),
            4 => w.array(v, Some(5), false, Self::history_entry),
            5 => w.array(v, None, false, Self::retro_entry),
            _ => w.handoff(v),
        });
    }

    fn job(&mut self, v: N) {
        const KEYS: &[&str] = &[
            "id",
            "goal",
            "done_definition",
            "constraints",
            "roles",
            "agreements",
            "budget",
            "kind",
            "experiment",
            "conclusion",
        ];
        self.object(v, KEYS, 4, true, |w, i, v| match i {
            0..=2 => w.text(v),
            3 => w.texts(v),
            4 => w.roles(v),
            5 => w.array(v, Some(20), false, Self::text),
            6 => w.budget(v),
            7 => w.one_of(v, &["experimentation", "investigation"]),
            8 => w.object(v, &["direction"], 1, true, |w, _, v| w.one_of(v, &["max", "min"])),
            _ => w.conclusion(v),
        });
    }

    /// `propertyNames: {enum: roles}`, each value `[text]≥1`.
    fn roles(&mut self, v: N) {
        if v.kind() != Kind::Object {
            self.report(Rule::Type("object"), v, &[]);
            return;
        }
        for (key, models) in v.members() {
            if !self.deeper_matters() {
                break;
            }
            self.at(Seg::Key(key), models, |w, m| w.array(m, None, true, Self::text));
        }
        if v.members().any(|(k, _)| !ROLE.contains(&k)) {
            self.report(Rule::PropertyName(ROLE), v, &[]);
        }
    }

    /// `minProperties: 1`, `tokens` and `units` integers of at least 1, nothing else.
    fn budget(&mut self, v: N) {
        if v.kind() == Kind::Object && v.members().next().is_none() {
            self.report(Rule::NonEmpty, v, &[]);
        }
        self.object(v, &["tokens", "units"], 0, true, |w, _, v| match v.number() {
            Some(n) if n.is_whole() => {
                if n.as_whole().is_some_and(|x| x < 1) {
                    w.report(Rule::Minimum(1), v, &[]);
                }
            }
            Some(n) => {
                w.report(Rule::Type("integer"), v, &[]);
                if n.as_f64() < 1.0 {
                    w.report(Rule::Minimum(1), v, &[]);
                }
            }
            None => w.report(Rule::Type("integer"), v, &[]),
        });
    }

    fn conclusion(&mut self, v: N) {
        const KEYS: &[&str] = &["outcome", "evidence", "supported"];
        self.object(v, KEYS, 2, true, |w, i, v| match i {
            0 => w.one_of(v, &["resolved", "inconclusive", "stopped"]),
            1 => w.texts(v),
            _ => w.text(v),
        });
    }

    fn plan(&mut self, v: N) {
        self.object(v, &["cursor", "units"], 2, true, |w, i, v| match i {
            0 => w.text(v),
            _ => w.array(v, None, false, Self::unit),
        });
    }

    fn unit(&mut self, v: N) {
        const KEYS: &[&str] = &[
            "id",
            "title",
            "brief_path",
            "status",
            "role",
            "depends_on",
            "verify",
            "commits",
            "touches",
            "reviews",
            "tests",
            "replay_of",
            "concludes",
            "attempts",
        ];
        self.object(v, KEYS, 7, true, |w, i, v| match i {
            3 => w.one_of(v, STATUS),
            4 => w.one_of(v, ROLE),
            5 | 7 | 9 => w.texts(v),
            8 => w.array(v, None, false, Self::string),
            12 => w.boolean(v),
            13 => w.array(v, Some(3), false, Self::attempt),
            _ => w.text(v),
        });
    }

    fn attempt(&mut self, v: N) {
        const KEYS: &[&str] = &["status", "outcome", "notes", "produced"];
        self.object(v, KEYS, 2, true, |w, i, v| match i {
            0 => w.one_of(v, STATUS),
            1 => w.text(v),
            2 => match v.as_str() {
                None => w.report(Rule::Type("string"), v, &[]),
                Some(s) if s.len() > 2000 && s.chars().count() > 2000 => w.report(Rule::TooLong, v, &[]),
                Some(_) => {}
            },
            _ => w.produced(v),
        });
    }

    /// `$defs/producedList`.
    fn produced(&mut self, v: N) {
        self.array(v, None, false, |w, item| {
            w.object(item, &["kind", "ref"], 2, true, |w, _, v| w.text(v));
        });
    }

    /// `$defs/historyEntry`: an open object.
    fn history_entry(&mut self, v: N) {
        const KEYS: &[&str] = &["unit", "outcome", "notes", "produced"];
        self.object(v, KEYS, 2, false, |w, i, v| match i {
            0 | 1 => w.text(v),
            2 => w.string(v),
            _ => w.produced(v),
        });
    }

    /// A `retro` entry: an open object.
    fn retro_entry(&mut self, v: N) {
        self.object(v, &["trigger", "patch_applied_to"], 2, false, |w, _, v| w.text(v));
    }

    fn state(&mut self, v: N) {
        self.object(
            v,
            &["repo", "artifacts", "external"],
            3,
            true,
            |w, i, v| match i {
                0 => w.object(v, &["branch", "head_sha", "dirty"], 3, true, |w, i, v| {
                    if i == 2 { w.boolean(v) } else { w.text(v) }
                }),
                1 => w.array(v, None, false, |w, item| {
                    w.object(item, &["path", "role"], 2, true, |w, _, v| w.text(v));
                }),
                _ => w.array(v, None, false, |w, item| {
                    w.object(
                        item,
                        &["kind", "ref", "status", "until_cmd"],
                        3,
                        true,
                        |w, i, v| {
                            if i == 0 {
                                w.one_of(v, &["process", "pr", "ci"]);
                            } else {
                                w.text(v);
                            }
                        },
                    );
                }),
            },
        );
    }

    fn handoff(&mut self, v: N) {
        const KEYS: &[&str] = &["next_action", "open_questions", "do_not", "notes"];
        self.object(v, KEYS, 3, true, |w, i, v| match i {
            0 => w.text(v),
            1 => w.array(v, None, false, Self::question),
            2 => w.texts(v),
            _ => w.string(v),
        });
    }

    /// `$defs/question`: `anyOf` a non-empty string or a question object.
    fn question(&mut self, v: N) {
        if !question_errors(v).is_empty() {
            self.report(Rule::AnyOf, v, &[]);
        }
    }
}

/// The keys of a question object.
const QUESTION_KEYS: &[&str] = &["q", "kind", "probe"];

/// A failure inside one branch of the `Question` `anyOf`: its path below the item, its rule, the
/// value there, and whether the branch's `type` matched the item.
type BranchFailure<'d, N> = (Vec<Seg<'d>>, Rule, N, bool);

/// The failures of both branches of `$defs/question` at `item` (none when a branch holds).
fn question_errors<'d, N: Node<'d>>(item: N) -> Vec<BranchFailure<'d, N>> {
    let mut text = Vec::new();
    match item.as_str() {
        None => text.push((Vec::new(), Rule::Type("string"), item, false)),
        Some("") => text.push((Vec::new(), Rule::NonEmpty, item, true)),
        Some(_) => return Vec::new(),
    }
    let mut object = Vec::new();
    if item.kind() == Kind::Object {
        let mut walk = Collect { found: Vec::new() };
        let mut present = [false; 3];
        let mut unexpected = 0;
        for (key, value) in item.members() {
            let Some(i) = QUESTION_KEYS.iter().position(|k| *k == key) else {
                unexpected += 1;
                continue;
            };
            present[i] = true;
            let here = vec![Seg::Key(key)];
            match key {
                "kind" => {
                    if !value.as_str().is_some_and(|s| s == "relay" || s == "decision") {
                        walk.found
                            .push((here, Rule::Enum(&["relay", "decision"]), value, true));
                    }
                }
                _ => match value.as_str() {
                    None => walk.found.push((here, Rule::Type("string"), value, true)),
                    Some("") => walk.found.push((here, Rule::NonEmpty, value, true)),
                    Some(_) => {}
                },
            }
        }
        let mut failures = Vec::new();
        for (i, key) in QUESTION_KEYS[..2].iter().enumerate() {
            if !present[i] {
                failures.push((Vec::new(), Rule::Required(key), item, true));
            }
        }
        failures.append(&mut walk.found);
        if unexpected > 0 {
            failures.push((Vec::new(), Rule::Additional(unexpected), item, true));
        }
        // `if: {required: [kind], properties: {kind: {const: relay}}}, then: {required: [probe]}`.
        let relay = item.get("kind").and_then(N::as_str) == Some("relay");
        if relay && !present[2] {
            failures.push((Vec::new(), Rule::Required("probe"), item, true));
        }
        if failures.is_empty() {
            return Vec::new();
        }
        object = failures;
    } else {
        object.push((Vec::new(), Rule::Type("object"), item, false));
    }
    text.append(&mut object);
    text
}

struct Collect<'d, N> {
    found: Vec<BranchFailure<'d, N>>,
}

/// For a failed open-question item (an `anyOf` of a string and an object): the branch failure to report (its path below the item),
/// or `None` to report the `anyOf` failure itself.
fn question_choice<'d, N: Node<'d>>(item: N) -> Option<(Vec<Seg<'d>>, Rule, N)> {
    let mut all = question_errors(item);
    all.sort_by(|a, b| {
        b.0.len()
            .cmp(&a.0.len())
            .then_with(|| compare(&a.0, &b.0))
            .then_with(|| b.3.cmp(&a.3))
    });
    match all.as_slice() {
        [first, second, ..] if first.0 == second.0 && first.3 == second.3 => None,
        [_, ..] => {
            let (path, rule, at, _) = all.swap_remove(0);
            Some((path, rule, at))
        }
        [] => None,
    }
}
