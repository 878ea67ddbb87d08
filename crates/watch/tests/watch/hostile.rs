//! Issue 27 item 11 (class: control characters reach a terminal): every path from file text to the
//! terminal — `watch --once` (the report, plain and coloured), the live view (the drawing), `plan` (the
//! Mermaid and the text picture) and the errors the view's commands print — carries no control
//! character and no bidirectional control from a checkpoint, a ledger, a contract, a path, an agent
//! name or an hours expression.

use std::sync::Arc;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use shiftwork_contracts::{AgentId, Contracts, ContractsConfig, DispatchRequest, SeededIdSource, Store};
use shiftwork_seams::echo::is_control_or_bidi;
use shiftwork_seams::{Clock, MemFs};
use shiftwork_watch::gather::{ContractsReader, StoreLocation};
use shiftwork_watch::view::ViewState;
use shiftwork_watch::{PlanFormat, Sources, WatchError, WatchOptions};

use crate::fixture::{self, mid_flight};

/// What a hostile writer puts in every string: an OSC 52 clipboard write, a CSI, a bell, the bidi
/// override, isolate and marks, NEL and the line separator.
const EVIL: &str = "\u{1b}]52;c;aGk=\u{7}\u{9b}2J\u{202e}\u{2066}\u{200f}\u{61c}\u{85}\u{2028}x";

/// `text` with the colour sequences the report writes itself (`ESC [ digits ; m`) removed.
fn without_own_colours(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\u{1b}[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let params = after
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b';')
            .count();
        assert!(
            after[params..].starts_with('m'),
            "an escape sequence that is not a colour: {after:?}"
        );
        rest = &after[params + 1..];
    }
    out.push_str(rest);
    out
}

fn assert_inert(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && is_control_or_bidi(c))
        .collect();
    assert!(bad.is_empty(), "{what} holds {bad:?}:\n{text}");
}

/// The mid-flight job with every string of the checkpoint and ledger hostile, under a hostile path,
/// and a contract with a hostile title in a store at a hostile path.
#[test]
fn issue27_item11_no_control_or_bidi_character_reaches_a_terminal() {
    let fx = mid_flight();
    let evil_json = serde_json::to_string(EVIL).unwrap();
    let evil_json = &evil_json[1..evil_json.len() - 1];
    let checkpoint = fixture::checkpoint()
        .replace("Wire the CLI", evil_json)
        .replace("\"parser-job\"", &format!("\"job{evil_json}\""))
        .replace("Ship the new parser", evil_json)
        .replace("src/parser.rs", &format!("src/{evil_json}.rs"))
        .replace("crate compiles", evil_json)
        .replace("PEG or LALR grammar?", evil_json)
        .replace("\"U6\"", &format!("\"U6{evil_json}\""));
    let dir = format!("/repo/{EVIL}");
    let path = format!("{dir}/checkpoint.json");
    fx.fs.make_dirs(&dir);
    fx.fs.write_file(&path, checkpoint.as_bytes());
    let ledger = fixture::ledger().replace("agent-bob", evil_json);
    fx.fs.write_file(format!("{path}.log.jsonl"), ledger.as_bytes());
    // A contract whose title holds bidirectional controls (the contracts crate refuses C0 and C1 in
    // titles, not those).
    let workspace = MemFs::new();
    workspace.make_dirs("/w");
    let queue = Contracts::builder(fx.store.clone())
        .fs(Arc::new(workspace))
        .ids(Arc::new(SeededIdSource::new(11)))
        .config(
            ContractsConfig::builder()
                .allowed_roots(shiftwork_contracts::roots::AllowedRoots::new(["/w"]))
                .build()
                .unwrap(),
        )
        .build();
    queue
        .dispatch(&DispatchRequest::new(
            AgentId::new("alice").unwrap(),
            AgentId::new("bob").unwrap(),
            "left \u{202e}thgir \u{2067}x",
            "/w",
        ))
        .unwrap();
    let options = WatchOptions {
        checkpoints: vec![path.clone().into(), format!("{dir}/missing.json").into()],
        ..fixture::options()
    };
    let clock: Arc<dyn Clock> = Arc::new(fx.clock.clone());
    let store: Arc<dyn Store> = fx.store.clone();
    let snapshot = Sources::new(&options, Arc::new(fx.fs.clone()), clock.clone())
        .unwrap()
        .with_contracts(ContractsReader::over(
            store,
            &format!("/db/{EVIL}/contracts.db"),
            None,
            clock,
        ))
        .snapshot();
    let job = snapshot.jobs[0].body.as_ref().unwrap();
    assert!(
        job.unit("U3").is_some() && job.held.len() == 1,
        "the hostile job was read: {job:?}"
    );
    assert!(snapshot.jobs[1].body.is_err(), "the missing checkpoint says why");
    // `watch --once`, plain and coloured.
    assert_inert("the report", &shiftwork_watch::report::render(&snapshot, false));
    assert_inert(
        "the coloured report",
        &without_own_colours(&shiftwork_watch::report::render(&snapshot, true)),
    );
    // The live view, at two sizes, with a filter.
    for (w, h) in [(80, 24), (200, 60)] {
        for filter in ["", "u"] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            let mut view = ViewState::new(3);
            view.filter = filter.to_owned();
            terminal
                .draw(|frame| shiftwork_watch::draw::draw(frame, &snapshot, &mut view))
                .unwrap();
            let buffer = terminal.backend().buffer();
            let cells: String = buffer.content().iter().map(|c| c.symbol()).collect();
            assert_inert(&format!("the screen at {w}x{h}"), &cells);
        }
    }
    // `plan`: both pictures.
    for format in [PlanFormat::Mermaid, PlanFormat::Text] {
        assert_inert(
            &format!("the {format:?} picture"),
            &shiftwork_watch::picture::render(job, format),
        );
    }
    // `plan` and `watch` errors: a checkpoint that cannot be read names its path, inertly.
    let refusal = snapshot.jobs[1].body.as_ref().unwrap_err();
    assert_inert("the refusal", &WatchError::Plan(refusal.clone()).to_string());
    assert_inert("a raw plan error", &WatchError::Plan(EVIL.to_owned()).to_string());
    // The store's location as shown, for a SQLite path and a PostgreSQL URL.
    assert_inert(
        "a store path",
        &StoreLocation::Sqlite(format!("/x/{EVIL}").into()).shown(),
    );
    assert_inert(
        "a store URL",
        &StoreLocation::Postgres(format!("postgres://u:p@h/{EVIL}")).shown(),
    );
}

/// Issue 27 item 11: the errors of the view's options repeat what was given inertly — an hours
/// expression naming a hostile zone, an agent name that is not one.
#[test]
fn issue27_item11_option_errors_are_inert() {
    let fx = mid_flight();
    for options in [
        WatchOptions {
            hours: Some(format!("TZ=Europe/{EVIL} Mon-Fri 09:00-17:00")),
            ..fixture::options()
        },
        WatchOptions {
            hours: Some(format!("Mon-Fri 09:00-17:00{EVIL}")),
            ..fixture::options()
        },
        WatchOptions {
            agent: Some(format!("bob{EVIL}")),
            ..fixture::options()
        },
    ] {
        let clock: Arc<dyn Clock> = Arc::new(fx.clock.clone());
        let e = Sources::new(&options, Arc::new(fx.fs.clone()), clock).unwrap_err();
        assert_inert("an option error", &e.to_string());
    }
}
