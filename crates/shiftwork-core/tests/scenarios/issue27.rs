//! Issue 27, the second hostile round (the shift-work part): one test per class, named after the
//! class, each failing on the code before the fix.

use shiftwork_core::json::{self, Json};

use super::support::*;

/// The reasons of the four checkpoint tools on the fixture's checkpoint.
fn reasons(fx: &Fx) -> Vec<String> {
    [fx.status(), fx.plan(), fx.clock_in(None), fx.out("U3", "done")]
        .iter()
        .map(|answer| {
            parse(answer)
                .get("reason")
                .and_then(Json::as_str)
                .unwrap_or_else(|| panic!("a refusal: {answer}"))
                .to_owned()
        })
        .collect()
}

/// Item 13: a refusal about the file a `checkpoint` argument names quotes none of its content —
/// whatever the file: a secret in a JSON string, a key, an enum's place, a file that is not JSON —
/// and a syntax error in a file that does not begin as a JSON object gives no position (the offset of
/// its first invalid byte would tell the length of a token). Every tool refuses alike.
#[test]
fn a_refusal_about_a_document_never_echoes_its_content_issue27_item13() {
    let secret = "ghp_SECRET0123456789";
    let with_secret = |edit: &dyn Fn(&mut json::Object)| {
        let doc = ex_with(|d| edit(d));
        json::to_checkpoint_text(&doc).into_bytes()
    };
    let files: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "a token file",
            format!(r#"{{"token": "{secret}"}}"#).into_bytes(),
            "checkpoint invalid: JSON does not match schema at 'root': 'version' is a required property",
        ),
        (
            "a bare string",
            format!(r#""{secret}""#).into_bytes(),
            "checkpoint invalid: JSON does not match schema at 'root': the value is not of type 'object'",
        ),
        (
            "a list of strings",
            format!(r#"["{secret}", "x"]"#).into_bytes(),
            "checkpoint invalid: JSON does not match schema at 'root': the value is not of type 'object'",
        ),
        (
            "a secret where an enum stands",
            with_secret(&|d| set(d, "plan/units/1/status", Json::str(secret))),
            "checkpoint invalid: JSON does not match schema at 'plan/units/1/status': the value is not one of ['todo', 'in_progress', 'done', 'blocked', 'dropped']",
        ),
        (
            "a secret as a key",
            with_secret(&|d| {
                d.insert(secret.to_owned(), Json::int(1));
            }),
            "checkpoint invalid: JSON does not match schema at 'root': Additional properties are not allowed (1 was unexpected)",
        ),
        (
            "a secret as a role name",
            with_secret(&|d| set(d, "job/roles", parse(&format!(r#"{{"{secret}": ["m"]}}"#)))),
            "checkpoint invalid: JSON does not match schema at 'job/roles': a property name is not one of ['planner', 'implementer', 'reviewer']",
        ),
        (
            "a secret in a question",
            with_secret(&|d| {
                set(
                    d,
                    "handoff/open_questions",
                    parse(&format!(r#"[5, {{"q": "{secret}", "kind": 7}}]"#)),
                )
            }),
            "checkpoint invalid: JSON does not match schema at 'handoff/open_questions/1/kind': the value is not one of ['relay', 'decision']",
        ),
        (
            "a secret where a number stands",
            with_secret(&|d| set(d, "job/budget", parse(&format!(r#"{{"tokens": "{secret}"}}"#)))),
            "checkpoint invalid: JSON does not match schema at 'job/budget/tokens': the value is not of type 'integer'",
        ),
        (
            "an env file",
            format!("TOKEN={secret}\n").into_bytes(),
            "checkpoint is not parseable as JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        (
            "digits, then a secret",
            format!("1234567{secret}").into_bytes(),
            "checkpoint is not parseable as JSON: Extra data (no position given: the file does not begin as a JSON object)",
        ),
        (
            "an array cut short",
            format!(r#"["{secret}", tru"#).into_bytes(),
            "checkpoint is not parseable as JSON: Expecting value (no position given: the file does not begin as a JSON object)",
        ),
        (
            "a binary file",
            [b"\x30\x82\x01\x22".as_slice(), secret.as_bytes(), b"\xff\xfe"].concat(),
            "checkpoint unreadable: 'utf-8' codec can't decode the file: invalid start byte (no position given: the file does not begin as a JSON object)",
        ),
        (
            "a string with a byte that is not UTF-8",
            [b"\"".as_slice(), secret.as_bytes(), b"\xe9\""].concat(),
            "checkpoint unreadable: 'utf-8' codec can't decode the file: invalid continuation byte (no position given: the file does not begin as a JSON object)",
        ),
    ];
    for (what, bytes, expected) in files {
        let fx = Fx::raw(&bytes);
        for reason in reasons(&fx) {
            assert_eq!(reason, expected, "{what}");
            assert!(
                !reason.contains("ghp_") && !reason.contains("SECRET"),
                "{what}: {reason}"
            );
        }
    }
    // A checkpoint being written keeps Python's position: its author needs the line and column.
    let fx = Fx::raw(b"{\"version\": 1,\n  \"job\": {\"id\": \"x\",}}");
    assert_eq!(
        reasons(&fx)[0],
        "checkpoint is not parseable as JSON: Expecting property name enclosed in double quotes: line 2 column 21 (char 35)"
    );
}

/// A checkpoint whose compact text is under a megabyte and whose §3.1 form is past
/// [`shiftwork_core::checkpoint::MAX_CHECKPOINT_BYTES`]: a history entry holds 264,000 zeros 505
/// arrays deep, each written on a line of its own indented by a kilobyte.
fn indents_past_the_read_bound() -> Vec<u8> {
    let deep = format!(
        "{}{}{}",
        "[".repeat(505),
        vec!["0"; 264_000].join(","),
        "]".repeat(505)
    );
    let doc = json::to_compact_text(&ex_with(|d| set(d, "history/0/deep", Json::Null)));
    doc.replacen("\"deep\": null", &format!("\"deep\": {deep}"), 1)
        .into_bytes()
}

/// Item 6: every writer keeps within what its readers read, and refuses with a sentence naming the
/// bound before its first write — nothing written, no ledger line, no temp or lock file left: a
/// clock-out whose checkpoint would be past the checkpoint reader's bound (the compact 163 MB
/// checkpoint rewritten as 297 MB of indented JSON), an accounting line or a brief line past the
/// ledger reader's line bound, intent records past what a reader of the lock reads. And the ledger
/// reader skips a line past its bound whole.
#[test]
fn a_write_its_reader_could_not_read_back_is_refused_issue27_item6() {
    let limit = shiftwork_core::checkpoint::MAX_CHECKPOINT_BYTES;
    let line_limit = shiftwork_core::ledger::MAX_LEDGER_LINE_BYTES;
    let huge_unit = ex_with(|d| {
        set(d, "plan/units/1/id", Json::str("U".repeat(line_limit)));
        set(
            d,
            "plan/units/2/depends_on",
            Json::strings(["U".repeat(line_limit)]),
        );
        set(d, "plan/cursor", Json::str("U".repeat(line_limit)));
    });
    type Call = Box<dyn Fn(&Fx) -> String>;
    let cases: Vec<(&str, Fx, Call, String)> = vec![
        (
            "a checkpoint past the read bound once indented",
            Fx::raw(&indents_past_the_read_bound()),
            Box::new(|fx| fx.out("U3", "done")),
            format!(
                "refused to write: the checkpoint would be more than {limit} bytes (256 MiB), the most a checkpoint's reader reads; nothing written"
            ),
        ),
        (
            "an accounting line past the line bound",
            Fx::new(&ex()),
            Box::new(move |fx| {
                fx.out_with("U3", "done", |a| {
                    a.accounting = Some(parse(&format!(
                        r#"{{"tokens": 1, "duration_ms": 1, "note": "{}"}}"#,
                        "n".repeat(line_limit)
                    )));
                })
            }),
            String::from(
                "refused to write: the ledger line would be 65682 bytes, more than 65536 bytes (64 KiB), the most a ledger's reader reads of one line; nothing written",
            ),
        ),
        (
            "a brief line past the line bound",
            Fx::new(&huge_unit),
            Box::new(|fx| fx.clock_in(None)),
            String::from(
                "refused to write: the ledger line would be 65619 bytes, more than 65536 bytes (64 KiB), the most a ledger's reader reads of one line; nothing written",
            ),
        ),
        (
            "lock records past the lock's read bound",
            {
                let fx = Fx::new(&ex());
                let mut fx = fx;
                fx.env = shiftwork_core::Env::new(
                    std::sync::Arc::new(fx.fs.clone()),
                    std::sync::Arc::new(fx.clock.clone()),
                    std::sync::Arc::new(shiftwork_seams::MemHost::new(PID, &"h".repeat(64 * 1024))),
                );
                fx
            },
            Box::new(|fx| fx.out("U3", "done")),
            String::from("refused to write: the lock file's records would be "),
        ),
    ];
    for (what, fx, call, expected) in cases {
        let before = fx.snapshot();
        let answer = call(&fx);
        let reason = parse(&answer)
            .get("reason")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        assert!(reason.starts_with(&expected), "{what}: {reason}");
        assert!(reason.ends_with("; nothing written"), "{what}: {reason}");
        assert_eq!(fx.snapshot(), before, "{what}: nothing written");
    }
    // The reader: a brief line past the bound is skipped whole; one at the bound is read.
    let brief = |pad: usize| {
        format!(
            r#"{{"event": "brief", "pad": "{}", "role": "reviewer", "unit": "U4"}}"#,
            "p".repeat(pad)
        )
    };
    let fixed = brief(0).len();
    for (len, briefed) in [(line_limit, true), (line_limit + 1, false)] {
        let fx = Fx::new(&ex());
        let line = brief(len - fixed);
        assert_eq!(line.len(), len);
        fx.fs.write_file(LEDGER, format!("{line}\n").as_bytes());
        let answer = fx.out("U4", "done");
        assert_eq!(
            answer.starts_with(r#"{"result": "ok""#),
            briefed,
            "{len} bytes: {answer}"
        );
    }
}

/// Item 7: calls that read a checkpoint share one memory budget. A call reserves its peak (a
/// multiple of the checkpoint's size) before it reads; while the budget has no room it waits — on the
/// environment's clock, so under a manual clock the wait ends as the clock is moved — and is then
/// refused busy, naming the size and the budget; a call that needs more than the whole budget is
/// refused at once. Every reservation is given back, refusals included.
#[test]
fn calls_wait_for_memory_and_are_refused_busy_never_over_the_budget_issue27_item7() {
    use shiftwork_core::admission::factor;
    use shiftwork_core::{MemoryBudget, ShiftworkRefusal};
    use std::time::Duration;

    let size = json::to_checkpoint_text(&ex()).len() as u64;
    let budget = |limit: u64| {
        let fx = Fx::new(&ex());
        let env = shiftwork_core::Env::new(
            std::sync::Arc::new(fx.fs.clone()),
            std::sync::Arc::new(fx.clock.clone()),
            std::sync::Arc::new(fx.host.clone()),
        )
        .with_memory_budget(MemoryBudget::new(limit).with_wait(Duration::from_secs(2)));
        Fx { env, ..fx }
    };
    // Another call holds all but the least any call reserves, less one byte: a plan waits its 2 s on
    // the manual clock, then is refused; so is every other call.
    let limit = factor::PLAN * size + 1_000_000;
    let fx = budget(limit);
    let other = fx
        .env
        .memory
        .reserve(&fx.clock, limit - factor::STATUS * size + 1, size)
        .unwrap();
    let before = shiftwork_seams::Clock::monotonic(&fx.clock);
    let refused = shiftwork_core::plan_checkpoint(&fx.env, std::path::Path::new(CP)).unwrap_err();
    let waited = shiftwork_seams::Clock::monotonic(&fx.clock) - before;
    assert!(waited >= Duration::from_secs(2), "{waited:?}");
    assert!(
        matches!(refused, ShiftworkRefusal::MemoryBusy { .. }),
        "{refused}"
    );
    assert!(!refused.is_answer());
    assert_eq!(
        refused.to_string(),
        format!(
            "busy: a call on a checkpoint of {size} bytes needs about {} bytes of memory, and the memory budget of {limit} bytes stayed taken by other calls for 2000 ms; nothing was done, try again",
            factor::PLAN * size,
        )
    );
    for call in [
        shiftwork_core::status(&fx.env, std::path::Path::new(CP), None).map(|_| ()),
        shiftwork_core::clock_in_arguments(&fx.env, std::path::Path::new(CP), None).map(|_| ()),
        shiftwork_core::clock_out_arguments(&fx.env, &out_args("U3", "done")).map(|_| ()),
    ] {
        assert!(
            matches!(call, Err(ShiftworkRefusal::MemoryBusy { .. })),
            "{call:?}"
        );
    }
    assert!(fx.ledger().is_none(), "a busy call writes nothing");
    drop(other);
    assert_eq!(fx.env.memory.reserved(), 0);
    assert!(fx.plan().starts_with(r#"{"result": "plan""#));
    assert!(fx.clock_in(None).starts_with(r#"{"result": "brief""#));
    assert!(fx.out("U3", "done").starts_with(r#"{"result": "ok""#));
    assert_eq!(fx.env.memory.reserved(), 0, "every reservation is given back");
    // A call that needs more than the whole budget is refused at once, without waiting.
    let fx = budget(factor::PLAN * size - 1);
    let before = shiftwork_seams::Clock::monotonic(&fx.clock);
    let refused = shiftwork_core::plan_checkpoint(&fx.env, std::path::Path::new(CP)).unwrap_err();
    assert_eq!(shiftwork_seams::Clock::monotonic(&fx.clock), before);
    assert_eq!(
        refused.to_string(),
        format!(
            "too large: a call on a checkpoint of {size} bytes needs about {} bytes of memory, more than the whole memory budget of {} bytes; nothing was done",
            factor::PLAN * size,
            factor::PLAN * size - 1
        )
    );
    assert!(!refused.is_answer());
    // The clock-out reserves, once it has read the checkpoint, what building and rewriting it takes.
    let fx = budget(factor::CLOCK_OUT_READ * size + 2 * size);
    assert!(matches!(
        shiftwork_core::clock_out_arguments(&fx.env, &out_args("U3", "done")),
        Err(ShiftworkRefusal::MemoryTooLarge { .. })
    ));
    assert_eq!(fx.env.memory.reserved(), 0);
    assert!(fx.ledger().is_none());
}

/// Item 7: many threads planning at once over one budget that holds two plans: every call is
/// admitted in turn (the real clock; the waits are short) and answers, and the reservations held
/// never pass the budget.
#[test]
fn concurrent_plans_take_turns_within_the_budget_issue27_item7() {
    use shiftwork_core::MemoryBudget;
    use shiftwork_core::admission::factor;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let fx = Fx::new(&big_plan_checkpoint(2000));
    let size = fx.cp().len() as u64;
    let limit = 2 * factor::PLAN * size;
    let env = Arc::new(
        shiftwork_core::Env::new(
            Arc::new(fx.fs.clone()),
            Arc::new(shiftwork_seams::SystemClock::new()),
            Arc::new(fx.host.clone()),
        )
        .with_memory_budget(MemoryBudget::new(limit)),
    );
    let done = Arc::new(AtomicBool::new(false));
    let most = Arc::new(AtomicU64::new(0));
    let watcher = {
        let (env, done, most) = (Arc::clone(&env), Arc::clone(&done), Arc::clone(&most));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(env.memory.reserved(), Ordering::Relaxed);
                std::thread::yield_now();
            }
        })
    };
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let env = Arc::clone(&env);
            std::thread::spawn(move || {
                shiftwork_core::plan_checkpoint(&env, std::path::Path::new(CP)).map(|p| p.batches.len())
            })
        })
        .collect();
    for call in calls {
        assert!(call.join().unwrap().is_ok());
    }
    done.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    assert!(most.load(Ordering::Relaxed) <= limit);
    assert_eq!(env.memory.reserved(), 0);
}

/// A checkpoint of `n` units in waves of ten.
fn big_plan_checkpoint(n: usize) -> Json {
    let units: Vec<Json> = (0..n)
        .map(|i| {
            let deps = if i >= 10 {
                vec![format!("U{}", i - 10)]
            } else {
                Vec::new()
            };
            let mut u = unit(&format!("U{i}(todo)"));
            if let Some(o) = u.as_object_mut() {
                o.insert(String::from("depends_on"), Json::strings(deps));
            }
            u
        })
        .collect();
    ex_with(|d| {
        set(d, "plan/units", Json::Array(units));
        set(d, "plan/cursor", Json::str("U0"));
    })
}
