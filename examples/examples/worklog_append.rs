//! Embedding `worklog`: another program (a build script, a CI job, an agent runtime) ticks finished
//! work into the user's Markdown log without going through MCP.
//!
//! Run: `cargo run -p examples --example worklog_append -- [DIR] [DESCRIPTION…]`
//!
//! With a directory, it previews and then appends to the newest `.md` file there. Without one, it
//! writes a day's note into a temporary directory first, so the example runs anywhere and leaves
//! nothing behind.

use shiftwork_seams::OsFs;
use shiftwork_worklog::{AppendStatus, Config, NotWritten, Worklog, WorklogError};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let scratch = tempfile::tempdir()?;
    let dir = match args.next() {
        Some(dir) => dir,
        None => {
            std::fs::write(
                scratch.path().join("2026-09-06.md"),
                "# 2026-09-06\n\nMorning notes.\n",
            )?;
            scratch.path().display().to_string()
        }
    };
    let rest: Vec<String> = args.collect();
    let description = if rest.is_empty() {
        String::from("Fixed the login redirect: the callback dropped the return URL")
    } else {
        rest.join(" ")
    };

    // The embedder reads its own configuration; `~` is expanded from the HOME it passes in.
    let mut config = Config::builder().dir(&dir).pattern(r"\.md$");
    if let Some(home) = std::env::var_os("HOME") {
        config = config.home(home);
    }
    let config = config.build();
    let log = Worklog::new(config, OsFs);

    // A preview first: nothing is written, and the answer names the file, never its path. A
    // description the log refuses (a control character, more than 4,096 bytes) is refused here too,
    // with a sentence that says why.
    let preview = match log.append(&description, true) {
        Ok(preview) => preview,
        Err(e @ (WorklogError::ControlCharacter { .. } | WorklogError::DescriptionTooLong { .. })) => {
            eprintln!("not written: {e}");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    println!("preview: {} → {:?}", preview.message, preview.line);

    // An `Ok` answer is not always a write: match the status (the answer is `#[must_use]`).
    match log.append(&description, false) {
        Ok(result) => match result.status {
            AppendStatus::Written => println!("written: {}", result.message),
            AppendStatus::Created => {
                println!("created: {}", result.message);
                println!("(tell the user: their note gained a checklist at its end)");
            }
            // Not set up (`no_dir`), not started (`no_file`), or already there (`duplicate`).
            AppendStatus::NotWritten(why) => println!("not written ({}): {}", why.as_str(), result.message),
        },
        // Errors are typed, and each one's text is a fixed sentence (the one the tool answers).
        Err(e @ WorklogError::LockTimeout { .. }) => eprintln!("another append is still running: {e}"),
        Err(e) => return Err(e.into()),
    }

    // Appending the same sentence again is harmless.
    let again = log.append(&description, false)?;
    if again.not_written() == Some(NotWritten::Duplicate) {
        println!("again: nothing written, the log already has it");
    }
    let check = log.check()?;
    println!("check: {}", check.message);
    if dir == scratch.path().display().to_string() {
        print!(
            "\nthe note now reads:\n{}",
            std::fs::read_to_string(scratch.path().join("2026-09-06.md"))?
        );
    }
    Ok(())
}
