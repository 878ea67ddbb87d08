//! The web view of `serve --http` through the real binary, over plain HTTP (issue 38): who may look
//! (the sign-in, the session cookie, its revocation, other sites refused), the headers every answer
//! carries, what the data documents hold, hostile text kept inert, the bounds, and `--ui off`. The
//! page itself, in a browser, is `web_view_browser.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;
mod web_support;

use std::time::{Duration, Instant};

use serde_json::json;
use web_support::{BIDI_SHOWN, IMG_TITLE, LINK_TITLE, MERMAID_TITLE, Team, next_event};

/// Issue 38 item 2: `/ui` without credentials shows the sign-in only; every data path is refused.
#[test]
fn issue38_item2_without_a_session_ui_shows_only_the_sign_in() {
    let team = Team::start(&[]);
    let mut client = team.client();
    let front = client.get("/ui");
    assert_eq!(front.status, 200);
    assert!(
        front.body.contains(r#"<form method="post" action="/ui/sign-in""#),
        "{}",
        front.body
    );
    assert!(!front.body.contains("Ship the tour") && !front.body.contains("app.js"));
    for path in [
        "/ui/state",
        "/ui/events",
        "/ui/session",
        "/ui/plan/0.svg",
        "/ui/plan/0.mmd",
        "/ui/contract/0190a6a4-0000-7000-8000-000000000000",
    ] {
        let refused = client.get(path);
        assert_eq!(refused.status, 401, "{path}: {refused:?}");
        assert!(!refused.body.contains("tour"), "{path}");
    }
}

/// Issue 38 item 4: every answer of the web view forbids inline script and style, remote origins and
/// framing, and sniffing; and the page's assets are the binary's own.
#[test]
fn issue38_item4_every_answer_carries_the_security_headers() {
    let team = Team::start(&[]);
    let mut client = team.client();
    let mut signed = team.client();
    assert_eq!(signed.sign_in(&team.lead).status, 303);
    let check = |path: &str, answer: &support::HttpAnswer| {
        let policy = answer
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no CSP"));
        assert!(policy.contains("frame-ancestors 'none'"), "{path}: {policy}");
        assert!(policy.contains("default-src 'none'"), "{path}: {policy}");
        assert!(
            !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"),
            "{path}: {policy}"
        );
        assert!(
            !policy.contains("http:") && !policy.contains("https:") && !policy.contains('*'),
            "{path}: {policy}"
        );
        assert_eq!(answer.header("x-content-type-options"), Some("nosniff"), "{path}");
        assert_eq!(answer.header("referrer-policy"), Some("same-origin"), "{path}");
        assert_eq!(answer.header("x-frame-options"), Some("DENY"), "{path}");
    };
    for path in ["/ui", "/ui/app.js", "/ui/app.css", "/ui/state", "/ui/nothing"] {
        check(path, &client.get(path));
    }
    for path in [
        "/ui",
        "/ui/state",
        "/ui/session",
        "/ui/plan/0.svg",
        "/ui/plan/0.mmd",
    ] {
        let answer = signed.get(path);
        assert!(answer.status < 300, "{path}: {answer:?}");
        check(path, &answer);
    }
    let page = signed.get("/ui");
    let policy = page.header("content-security-policy").unwrap();
    assert!(
        policy.contains("script-src 'self'") && policy.contains("style-src 'self'"),
        "{policy}"
    );
    assert!(policy.contains("require-trusted-types-for 'script'"), "{policy}");
    // No inline script or style, no handler attribute, nothing from another origin.
    for forbidden in ["<script>", "style=", "onload", "onclick", "http://", "https://"] {
        assert!(!page.body.contains(forbidden), "the page holds {forbidden}");
    }
    let script = client.get("/ui/app.js");
    assert_eq!(
        script.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ] {
        assert!(!script.body.contains(sink), "app.js uses {sink}");
    }
}

/// Issue 38 item 2: the sign-in takes the token once (a form body) and answers with a signed,
/// short-lived `HttpOnly`, `SameSite=Strict` cookie that does not hold the token.
#[test]
fn issue38_item2_sign_in_takes_the_token_once_and_sets_a_short_lived_session_cookie() {
    let team = Team::start(&[]);
    let mut client = team.client();
    let signed = client.sign_in(&team.lead);
    assert_eq!(signed.status, 303, "{signed:?}");
    assert_eq!(signed.header("location"), Some("/ui"));
    let cookie = signed.header("set-cookie").unwrap();
    assert!(cookie.starts_with("shiftwork-ui=v1."), "{cookie}");
    for attribute in ["HttpOnly", "SameSite=Strict", "Max-Age=1800", "Path=/ui"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    assert!(!cookie.contains(&team.lead) && !signed.body.contains(&team.lead));
    let page = client.get("/ui");
    assert!(page.body.contains("/ui/app.js") && !page.body.contains(&team.lead));
    let session = client.get("/ui/session");
    assert_eq!(session.status, 200);
    assert_eq!(session.json()["agent"], "lead");
    assert!(!session.body.contains(&team.lead));
    // The session is renewed as the page asks.
    assert!(
        session
            .header("set-cookie")
            .is_some_and(|c| c.contains("Max-Age="))
    );
}

/// Issue 38 item 2: a token that is not accepted, or a cookie the server did not sign, opens nothing;
/// the refusal repeats no token.
#[test]
fn issue38_item2_a_bad_token_or_a_forged_cookie_signs_nothing_in() {
    let team = Team::start(&[]);
    let mut client = team.client();
    for token in ["swk_not_a_token", "<script>alert(1)</script>", "tok en!"] {
        let refused = client.sign_in(token);
        assert_eq!(refused.status, 401, "{token}: {refused:?}");
        assert!(refused.header("set-cookie").is_none(), "{token}");
        assert!(refused.body.contains("role=\"alert\""), "{}", refused.body);
        assert!(
            !refused.body.contains(token),
            "the refusal repeats the token {token}"
        );
    }
    let empty = client.post_form("/ui/sign-in", "token=", &[]);
    assert_eq!(empty.status, 400);
    assert_eq!(client.sign_in(&team.bob).status, 303);
    let good = client.cookie.clone().unwrap();
    for forged in [
        good.replace("v1.", "v2."),
        format!(
            "{}{}",
            &good[..good.len() - 1],
            if good.ends_with('0') { '1' } else { '0' }
        ),
        String::from("shiftwork-ui=v1.00000000000000000000000000000000.99999999999.00"),
    ] {
        let mut other = team.client();
        other.cookie = Some(forged.clone());
        assert_eq!(other.get("/ui/state").status, 401, "{forged}");
        assert!(!other.get("/ui").body.contains("app.js"), "{forged}");
    }
}

/// Issue 38 item 2 (CSRF): sign-in and sign-out come from the server's own page only, as form posts;
/// sign-out needs the session's own token and ends the session.
#[test]
fn issue38_item2_sign_in_and_sign_out_refuse_other_sites() {
    let team = Team::start(&[]);
    let mut client = team.client();
    let body = format!("token={}", web_support::form_encode(&team.lead));
    let evil = client.post_form("/ui/sign-in", &body, &[("origin", "http://evil.example")]);
    assert_eq!(evil.status, 403);
    assert!(evil.header("set-cookie").is_none());
    let null = client.post_form("/ui/sign-in", &body, &[("origin", "null")]);
    assert_eq!(null.status, 403);
    let cross = client.post_form(
        "/ui/sign-in",
        &body,
        &[("origin", "null"), ("sec-fetch-site", "cross-site")],
    );
    assert_eq!(cross.status, 403);
    assert_eq!(client.get("/ui/sign-in").status, 405);
    assert_eq!(client.sign_in(&team.lead).status, 303);
    let session = client.get("/ui/session").json();
    let csrf = session["csrf"].as_str().unwrap().to_owned();
    for (body, headers) in [
        (String::from("csrf=00"), vec![]),
        (String::new(), vec![]),
        (format!("csrf={csrf}"), vec![("origin", "http://evil.example")]),
    ] {
        let refused = client.post_form("/ui/sign-out", &body, &headers);
        assert_eq!(refused.status, 403, "{body} {headers:?}");
    }
    assert_eq!(client.get("/ui/state").status, 200, "the session is still open");
    let kept = client.cookie.clone();
    let out = client.post_form("/ui/sign-out", &format!("csrf={csrf}"), &[]);
    assert_eq!(out.status, 303);
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"));
    let mut replay = team.client();
    replay.cookie = kept;
    assert_eq!(
        replay.get("/ui/state").status,
        401,
        "the old cookie opens nothing"
    );
}

/// Issue 38 item 2: revoking the token ends its session at the next request, and its open event
/// stream at its next tick.
#[test]
fn issue38_item2_a_revoked_token_ends_its_session_and_its_stream() {
    let team = Team::start(&[]);
    let mut client = team.client();
    assert_eq!(client.sign_in(&team.bob).status, 303);
    let events = client.events();
    assert!(next_event(&events, "state", Duration::from_secs(20), |_| true).is_some());
    team.revoke("bob");
    let ended = next_event(&events, "signed-out", Duration::from_secs(20), |_| true)
        .expect("the stream says the session ended");
    assert!(ended["reason"].as_str().unwrap().contains("revoked"), "{ended}");
    let refused = client.get("/ui/state");
    assert_eq!(refused.status, 401);
    assert!(refused.header("set-cookie").unwrap().contains("Max-Age=0"));
    assert_eq!(
        client.sign_in(&team.bob).status,
        401,
        "the revoked token signs in no more"
    );
}

/// Issue 38 item 1: the data document holds each job (waves, holds, budget, cursor), the queue per
/// agent, the hours gate and the work log's items; one contract's whole record; all of it cleaned
/// text, hostile titles as the characters they are.
#[test]
fn issue38_item1_the_state_document_shows_jobs_contracts_hours_and_the_work_log() {
    let team = Team::start(&["--ui-worklog-items"]);
    let waiting = team.dispatch("alice", "bob", IMG_TITLE);
    let claimed = team.dispatch("alice", "carol", LINK_TITLE);
    team.run(&["call", "poll_next_task", "{}"], Some("carol"));
    team.clock_out("A");
    let mut client = team.client();
    assert_eq!(client.sign_in(&team.lead).status, 303);
    let state = client.get("/ui/state").json();
    let doc = &state["state"];
    assert!(state["now"].as_i64().unwrap() > 0);
    let job = &doc["jobs"][0]["job"];
    assert_eq!(job["id"], "tour");
    let titles: Vec<&str> = job["waves"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w.as_array().unwrap())
        .map(|u| u["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&IMG_TITLE) && titles.contains(&MERMAID_TITLE) && titles.contains(&LINK_TITLE));
    assert!(titles.contains(&BIDI_SHOWN), "{titles:?}");
    assert_eq!(job["finished"][0]["id"], "A");
    assert_eq!(job["clock_outs"][0]["tokens"], 1234);
    assert_eq!(job["clock_outs"][0]["agent"], "agent-7");
    assert_eq!(job["budget"]["dimensions"][0]["name"], "units");
    let contracts = &doc["contracts"];
    assert_eq!(contracts["waiting"][0]["id"], waiting.as_str());
    assert_eq!(contracts["waiting"][0]["title"], IMG_TITLE);
    assert_eq!(contracts["claimed"][0]["id"], claimed.as_str());
    assert_eq!(contracts["claimed"][0]["epoch"], 1);
    assert_eq!(doc["hours"]["expression"], "TZ=UTC Mon-Fri 09:00-17:30");
    let items: Vec<&str> = doc["worklog"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].as_str().unwrap())
        .collect();
    assert_eq!(items[1], IMG_TITLE);
    assert!(items[2].starts_with("[docs](javascript:") && items[2].contains(BIDI_SHOWN));
    assert_eq!(doc["worklog"]["file"], "2026-09-21.md");
    assert!(
        !client
            .get("/ui/state")
            .body
            .contains(team.root.join("log").to_str().unwrap()),
        "no log path"
    );
    let record = client.get(&format!("/ui/contract/{claimed}"));
    assert_eq!(record.status, 200);
    let record = record.json();
    assert_eq!(
        (record["title"].as_str(), record["target"].as_str()),
        (Some(LINK_TITLE), Some("carol"))
    );
    assert!(
        record["times"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "claimed")
    );
    assert_eq!(
        client
            .get("/ui/contract/0190a6a4-0000-7000-8000-000000000000")
            .status,
        404
    );
    assert_eq!(client.get("/ui/contract/%3Cscript%3E").status, 404);
    // Without --ui-worklog-items, the count and the name only, as worklog_check says.
    let plain = Team::start(&[]);
    let mut other = plain.client();
    assert_eq!(other.sign_in(&plain.lead).status, 303);
    let log = other.get("/ui/state").json()["state"]["worklog"].clone();
    assert_eq!(log["count"], 3);
    assert!(log["items"].is_null(), "{log}");
}

/// Issue 38 item 4: the plan picture is an SVG of fixed elements whose only text from the plan is
/// escaped; the Mermaid download is `plan --format mermaid`'s inert chart.
#[test]
fn issue38_item4_the_plan_picture_is_inert() {
    let team = Team::start(&[]);
    let mut client = team.client();
    assert_eq!(client.sign_in(&team.lead).status, 303);
    for scheme in ["light", "dark"] {
        let svg = client.get(&format!("/ui/plan/0.svg?scheme={scheme}"));
        assert_eq!(svg.status, 200);
        assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
        assert!(svg.header("content-security-policy").unwrap().contains("sandbox"));
        let body = &svg.body;
        // Titles are cut to fit their box.
        assert!(body.contains("B · &lt;img src=x onerror=&quot;windo…"), "{body}");
        assert!(body.contains("C · %%{init: {&quot;securityLevel"), "{body}");
        assert!(
            body.contains("E · \u{fffd}txt.exe\u{fffd} release notes"),
            "{body}"
        );
        for forbidden in [
            "<script",
            "<img",
            "<a ",
            "href",
            "<foreignObject",
            "<style",
            "style=",
            "\u{202e}",
        ] {
            assert!(
                !body.contains(forbidden),
                "{scheme}: the picture holds {forbidden}"
            );
        }
    }
    let chart = client.get("/ui/plan/0.mmd");
    assert_eq!(
        chart.header("content-disposition"),
        Some("attachment; filename=\"plan.mmd\"")
    );
    assert!(chart.body.starts_with("flowchart LR\n"), "{}", chart.body);
    assert!(!chart.body.contains("%%") && !chart.body.contains("<img") && chart.body.contains("#60;img"));
    assert_eq!(client.get("/ui/plan/7.svg").status, 404);
    assert_eq!(client.get("/ui/plan/x.svg").status, 404);
}

/// Issue 38 item 1: the event stream sends a new document after a clock-out and after a dispatch
/// made by other processes (the browser test shows them on the page).
#[test]
fn issue38_item1_the_stream_follows_a_clock_out_and_a_dispatch_by_another_process() {
    let team = Team::start(&[]);
    let mut client = team.client();
    assert_eq!(client.sign_in(&team.lead).status, 303);
    let events = client.events();
    let first = next_event(&events, "state", Duration::from_secs(20), |_| true).unwrap();
    assert_eq!(first["state"]["jobs"][0]["job"]["cursor"], "A");
    team.clock_out("A");
    let after = next_event(&events, "state", Duration::from_secs(20), |e| {
        e["state"]["jobs"][0]["job"]["finished"][0]["id"] == "A"
    });
    assert!(after.is_some(), "the clock-out reached the stream");
    let id = team.dispatch("alice", "bob", "Review the parser diff");
    let dispatched = next_event(&events, "state", Duration::from_secs(20), |e| {
        e["state"]["contracts"]["waiting"]
            .as_array()
            .is_some_and(|w| w.iter().any(|c| c["id"] == id.as_str()))
    });
    assert!(dispatched.is_some(), "the dispatch reached the stream");
}

/// Issue 38 item 3: a session that asks as fast as it can is slowed (429 with Retry-After, answered
/// only once the session's rate gives back a request, so a page asking in a loop is held to that
/// rate), and the tool calls go on.
#[test]
fn issue38_item3_a_session_polling_as_fast_as_it_can_is_slowed() {
    let team = Team::start(&[]);
    let mut client = team.client();
    assert_eq!(client.sign_in(&team.lead).status, 303);
    let timed: Vec<(u16, Duration)> = (0..60)
        .map(|_| {
            let asked = Instant::now();
            let status = client.get("/ui/state").status;
            (status, asked.elapsed())
        })
        .collect();
    let statuses: Vec<u16> = timed.iter().map(|(s, _)| *s).collect();
    assert!(statuses.contains(&429), "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 200 || *s == 429), "{statuses:?}");
    for (status, took) in &timed {
        if *status == 429 {
            assert!(
                *took >= Duration::from_millis(90),
                "a request over the rate is answered after its wait, not at once: {took:?}"
            );
        }
    }
    let answer = team.server.call(
        &team.bob,
        "hours_check",
        json!({"expression": "Mon-Fri 09:00-17:00", "at": "2026-12-04T10:00:00Z"}),
    );
    assert_eq!(answer["result"]["structuredContent"]["result"], "hours");
}

/// Issue 38 item 1 (which jobs): a checkpoint named with `--ui-checkpoints` must lie inside the
/// roots; `--ui off` (or `SHIFTWORK_UI=off`) serves no web view; the flags need `--http`.
#[test]
fn issue38_item1_the_web_view_settings() {
    let off = Team::start(&["--ui", "off"]);
    assert_eq!(off.client().get("/ui").status, 404);
    assert_eq!(off.server.get("/healthz").status, 200);
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    support::add_token(&tokens, "lead");
    let tokens = tokens.to_str().unwrap();
    let env_off = support::HttpServer::start(
        dir.path(),
        &["--auth-tokens", tokens, "--tools", "hours"],
        &[("SHIFTWORK_UI", "off")],
    );
    assert_eq!(env_off.get("/ui").status, 404);
    let serve = |args: &[&str]| {
        let mut all = vec!["serve"];
        all.extend_from_slice(args);
        support::run(&all, &[])
    };
    for (args, says) in [
        (
            vec!["--ui-hours", "Mon-Fri 09:00-17:00"],
            "--ui-hours applies only with --http",
        ),
        (
            vec!["--http", "127.0.0.1:0", "--auth-tokens", tokens, "--ui", "maybe"],
            "--ui / SHIFTWORK_UI must be on or off, not 'maybe'",
        ),
        (
            vec![
                "--http",
                "127.0.0.1:0",
                "--auth-tokens",
                tokens,
                "--ui-checkpoints",
                "/etc/cp.json",
            ],
            "--ui-checkpoints: ",
        ),
        (
            vec![
                "--http",
                "127.0.0.1:0",
                "--auth-tokens",
                tokens,
                "--ui-hours",
                "Mon-Fri 9-5",
            ],
            "--ui-hours: ",
        ),
    ] {
        let out = serve(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// Issue 38 item 3 (start-up and shutdown): SIGTERM ends the open pages' streams, and the server
/// exits 0 as it drains.
#[test]
fn issue38_item3_a_signal_ends_the_open_pages_and_the_server_exits() {
    let mut team = Team::start(&[]);
    let mut client = team.client();
    assert_eq!(client.sign_in(&team.lead).status, 303);
    let events = client.events();
    assert!(next_event(&events, "state", Duration::from_secs(20), |_| true).is_some());
    // SAFETY: kill(2) on the server's pid with a valid signal.
    assert_eq!(unsafe { libc::kill(team.server.pid() as i32, libc::SIGTERM) }, 0);
    let status = team
        .server
        .wait_for_exit(Duration::from_secs(30))
        .expect("the server exits");
    assert!(status.success(), "{status:?}");
    loop {
        match events.recv_timeout(Duration::from_secs(20)) {
            Ok(_) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("the stream did not end"),
        }
    }
}
