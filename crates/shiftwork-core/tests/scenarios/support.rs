//! Fixtures of §19.1: the repo `/` holding `.git/` and `.shiftwork/cp.json`, a clock fixed at
//! 2026-01-02T03:04:05.750Z, and the call abbreviations `in()`, `out(U, S)`.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use shiftwork_core::json::{self, Json, Object};
use shiftwork_core::{Answer, ClockOutArguments, Env, ShiftworkRefusal};
use shiftwork_seams::{ManualClock, MemFs, MemHost};

pub const CP: &str = ".shiftwork/cp.json";
pub const CP_ABS: &str = "/.shiftwork/cp.json";
pub const LEDGER: &str = "/.shiftwork/cp.json.log.jsonl";
pub const PID: u32 = 4242;
pub const HOST: &str = "testhost";

/// EX of §19.1, as compact JSON.
pub const EX: &str = r##"{"version": 1, "job": {"id": "demo-job", "goal": "Ship the demo.", "done_definition": "make test passes", "constraints": ["keep the API stable", "no new dependencies"]}, "plan": {"cursor": "U3", "units": [{"id": "U1", "title": "Scaffold", "brief_path": "briefs/U1.md", "status": "done", "role": "implementer", "depends_on": [], "verify": "make u1", "commits": ["abc1234"]}, {"id": "U3", "title": "Build core", "brief_path": "briefs/U3.md", "status": "todo", "role": "implementer", "depends_on": ["U1"], "verify": "make u3"}, {"id": "U4", "title": "Review core", "brief_path": "briefs/U4.md", "status": "todo", "role": "reviewer", "depends_on": ["U3"], "verify": "make u4"}]}, "state": {"repo": {"branch": "main", "head_sha": "abc1234", "dirty": false}, "artifacts": [{"path": "docs/spec.md", "role": "spec"}], "external": [{"kind": "process", "ref": "pid 42", "status": "running", "until_cmd": "test -f done"}, {"kind": "pr", "ref": "#12", "status": "open"}]}, "history": [{"unit": "U1", "outcome": "done"}], "retro": [{"trigger": "slow tests", "patch_applied_to": "Makefile"}], "handoff": {"next_action": "Build the core.", "open_questions": [], "do_not": ["do not touch vendor/"]}}"##;

pub struct Fx {
    pub fs: MemFs,
    pub clock: ManualClock,
    pub host: MemHost,
    pub env: Env,
}

impl Fx {
    /// A fixture whose checkpoint holds `doc` in the §3.1 form.
    pub fn new(doc: &Json) -> Fx {
        let fx = Fx::empty();
        fx.fs.write_file(CP_ABS, json::to_checkpoint_text(doc).as_bytes());
        fx
    }

    /// A fixture whose checkpoint file holds `bytes` as they are.
    pub fn raw(bytes: &[u8]) -> Fx {
        let fx = Fx::empty();
        fx.fs.write_file(CP_ABS, bytes);
        fx
    }

    pub fn empty() -> Fx {
        let fs = MemFs::new();
        fs.make_dirs("/.git");
        fs.make_dirs("/.shiftwork");
        let clock = ManualClock::new(
            Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap() + chrono::Duration::milliseconds(750),
        );
        let host = MemHost::new(PID, HOST);
        // The scenarios of relay questions are written for a server with probes on (SW-137).
        let env = Env::new(
            Arc::new(fs.clone()),
            Arc::new(clock.clone()),
            Arc::new(host.clone()),
        )
        .with_probes(true);
        Fx { fs, clock, host, env }
    }

    pub fn cp(&self) -> Vec<u8> {
        self.fs.file(CP_ABS).unwrap()
    }

    pub fn doc(&self) -> Json {
        json::parse(std::str::from_utf8(&self.cp()).unwrap()).unwrap()
    }

    pub fn ledger(&self) -> Option<String> {
        self.fs.file(LEDGER).map(|b| String::from_utf8(b).unwrap())
    }

    pub fn ledger_lines(&self) -> Vec<String> {
        self.ledger()
            .map(|l| l.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    pub fn status(&self) -> String {
        compact(&shiftwork_core::status(&self.env, std::path::Path::new(CP), None))
    }

    pub fn plan(&self) -> String {
        compact(&shiftwork_core::plan_checkpoint(
            &self.env,
            std::path::Path::new(CP),
        ))
    }

    pub fn clock_in(&self, unit: Option<&str>) -> String {
        compact(&shiftwork_core::clock_in_arguments(
            &self.env,
            std::path::Path::new(CP),
            unit,
        ))
    }

    pub fn out(&self, unit: &str, status: &str) -> String {
        self.out_with(unit, status, |_| {})
    }

    pub fn out_with(&self, unit: &str, status: &str, edit: impl FnOnce(&mut ClockOutArguments)) -> String {
        let mut args = out_args(unit, status);
        edit(&mut args);
        compact(&shiftwork_core::clock_out_arguments(&self.env, &args))
    }

    /// Every path of the filesystem but the fixed directories, with contents (for "nothing written").
    pub fn snapshot(&self) -> Vec<(std::path::PathBuf, Option<Vec<u8>>)> {
        self.fs
            .paths()
            .into_iter()
            .map(|p| (p.clone(), self.fs.file(&p)))
            .collect()
    }
}

pub fn out_args(unit: &str, status: &str) -> ClockOutArguments {
    ClockOutArguments::new(
        CP,
        unit,
        status,
        Object::default(),
        obj(&format!(r#"{{"unit": "{unit}", "outcome": "done"}}"#)),
    )
}

/// A value with a JSON answer: an operation's result, or an answer object already rendered.
pub trait Rendered {
    fn answer(&self) -> Json;
}

impl Rendered for Json {
    fn answer(&self) -> Json {
        self.clone()
    }
}

impl<T: Answer> Rendered for Result<T, ShiftworkRefusal> {
    fn answer(&self) -> Json {
        self.to_answer()
    }
}

/// The one-line JSON of an answer.
pub fn compact(v: &impl Rendered) -> String {
    json::to_compact_text(&v.answer())
}

pub fn parse(text: &str) -> Json {
    json::parse(text).unwrap()
}

pub fn obj(text: &str) -> Object {
    parse(text).as_object().unwrap().clone()
}

pub fn ex() -> Json {
    parse(EX)
}

/// EX with `edit` applied.
pub fn ex_with(edit: impl FnOnce(&mut Object)) -> Json {
    let mut doc = ex();
    edit(doc.as_object_mut().unwrap());
    doc
}

/// Sets a member at a `/`-separated path of an object (array indices allowed).
pub fn set(doc: &mut Object, path: &str, value: Json) {
    let mut parts: Vec<&str> = path.split('/').collect();
    let last = parts.pop().unwrap();
    if parts.is_empty() {
        doc.insert(last.to_owned(), value);
        return;
    }
    let mut node: &mut Json = doc.get_mut(parts[0]).unwrap();
    for p in &parts[1..] {
        node = match node {
            Json::Array(a) => &mut a[p.parse::<usize>().unwrap()],
            Json::Object(o) => o.get_mut(*p).unwrap(),
            _ => panic!("no container at {p}"),
        };
    }
    match node {
        Json::Array(a) => a[last.parse::<usize>().unwrap()] = value,
        Json::Object(o) => {
            o.insert(last.to_owned(), value);
        }
        _ => panic!("no container at {last}"),
    }
}

/// G(spec; cursor) of §19.1: `spec` like `N2(todo, reviewer, <-N1)`, units separated by `;`.
pub fn g(spec: &str, cursor: &str) -> Json {
    let units: Vec<Json> = spec.split(';').map(|u| unit(u.trim())).collect();
    ex_with(|d| {
        set(d, "plan/units", Json::Array(units));
        set(d, "plan/cursor", Json::str(cursor));
        set(d, "history", Json::Array(vec![]));
    })
}

/// One unit of G's notation.
pub fn unit(spec: &str) -> Json {
    let (id, rest) = spec.split_once('(').unwrap();
    let rest = rest.trim_end_matches(')');
    let mut status = "todo";
    let mut role = "implementer";
    let mut deps: Vec<String> = Vec::new();
    for part in rest.split(',').map(str::trim) {
        if let Some(d) = part.strip_prefix("<-") {
            deps.push(d.trim().to_owned());
        } else if ["planner", "implementer", "reviewer"].contains(&part) {
            role = part;
        } else if !part.is_empty() && !deps.is_empty() {
            deps.push(part.to_owned());
        } else if !part.is_empty() {
            status = part;
        }
    }
    parse(&format!(
        r#"{{"id": "{id}", "title": "t {id}", "brief_path": "b/{id}.md", "status": "{status}", "role": "{role}", "depends_on": {}, "verify": "v {id}"}}"#,
        json::to_compact_text(&Json::strings(&deps))
    ))
}
