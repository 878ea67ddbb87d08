//! A naive reference model of §4 and §5, written straight from the specification's sentences with
//! `char`s and `str` methods and no attention to speed. The byte scanner of `shiftwork_worklog::core` is checked
//! against it (a differential oracle), and the invariants use it to tell whether a text ends inside
//! an unclosed fenced block.
//!
//! This file is also compiled into the fuzz target `worklog_core` (fuzz/fuzz_targets/worklog_core.rs).

use shiftwork_worklog::core::is_ws;

/// A line of the body (WL-23).
#[derive(Debug, Clone, Copy)]
pub struct ModelLine<'t> {
    pub content: &'t str,
    pub terminator: &'t str,
}

/// The lines of a whole text: the mark is skipped (WL-22), lines break at LF only (WL-23).
pub fn lines(text: &str) -> Vec<ModelLine<'_>> {
    let mut rest = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let mut out = Vec::new();
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(i) => {
                let raw = &rest[..i];
                let (content, terminator) = match raw.strip_suffix('\r') {
                    Some(c) => (c, "\r\n"),
                    None => (raw, "\n"),
                };
                out.push(ModelLine { content, terminator });
                rest = &rest[i + 1..];
            }
            None => {
                out.push(ModelLine {
                    content: rest,
                    terminator: "",
                });
                break;
            }
        }
    }
    out
}

/// The indent of a content and its width in characters.
pub fn indent(content: &str) -> (&str, usize) {
    let end = content.find(|c: char| !is_ws(c)).unwrap_or(content.len());
    (&content[..end], content[..end].chars().count())
}

fn after_indent(content: &str) -> Vec<char> {
    content[indent(content).0.len()..].chars().collect()
}

/// WL-25: the bullet and item text of an item line.
pub fn item(content: &str) -> Option<(char, String)> {
    let r = after_indent(content);
    let is = r.len() >= 5
        && "-*+".contains(r[0])
        && r[1] == ' '
        && r[2] == '['
        && " xX".contains(r[3])
        && r[4] == ']';
    is.then(|| {
        let rest: String = r[5..].iter().collect();
        (r[0], rest.trim_start_matches(is_ws).to_owned())
    })
}

/// WL-26.
pub fn generic_list(content: &str) -> bool {
    let r = after_indent(content);
    if r.first().is_some_and(|c| "-*+".contains(*c)) {
        return r.get(1).is_some_and(|c| is_ws(*c));
    }
    let digits = r.iter().take_while(|c| c.is_ascii_digit()).count();
    digits > 0
        && r.get(digits).is_some_and(|c| *c == '.' || *c == ')')
        && r.get(digits + 1).is_some_and(|c| is_ws(*c))
}

/// WL-27.
pub fn thematic_break(content: &str) -> bool {
    let v: Vec<char> = content.chars().filter(|c| !is_ws(*c)).collect();
    v.len() >= 3 && "-*_".contains(v[0]) && v.iter().all(|c| *c == v[0])
}

/// WL-28: the character and run length a fence line opens.
pub fn fence_open(content: &str) -> Option<(char, usize)> {
    let r = after_indent(content);
    let ch = *r.first()?;
    if ch != '`' && ch != '~' {
        return None;
    }
    let run = r.iter().take_while(|c| **c == ch).count();
    let info = &r[run..];
    (run >= 3 && !(ch == '`' && info.contains(&'`'))).then_some((ch, run))
}

/// WL-29.
pub fn fence_close(content: &str, fence: (char, usize)) -> bool {
    let r = after_indent(content);
    let run = r.iter().take_while(|c| **c == fence.0).count();
    run >= fence.1 && r[run..].iter().all(|c| is_ws(*c))
}

/// WL-30: the number of front-matter lines at the start.
pub fn front_matter_len(lines: &[ModelLine<'_>]) -> usize {
    if lines
        .first()
        .is_none_or(|l| l.content.trim_end_matches(is_ws) != "---")
    {
        return 0;
    }
    lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, l)| matches!(l.content.trim_end_matches(is_ws), "---" | "..."))
        .map_or(0, |(i, _)| i + 1)
}

/// The checklist as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChecklist {
    pub first_line: usize,
    pub last_line: usize,
    pub indent: String,
    pub bullet: char,
    /// The item texts, in order.
    pub items: Vec<String>,
}

/// WL-31 … WL-33.
pub fn checklist(text: &str) -> Option<ModelChecklist> {
    let lines = lines(text);
    let mut fence = None;
    for i in front_matter_len(&lines)..lines.len() {
        let c = lines[i].content;
        if let Some(f) = fence {
            if fence_close(c, f) {
                fence = None;
            }
            continue;
        }
        if let Some(f) = fence_open(c) {
            fence = Some(f);
            continue;
        }
        let Some((bullet, text0)) = item(c) else { continue };
        let (ind, base) = indent(c);
        let mut list = ModelChecklist {
            first_line: i,
            last_line: i,
            indent: ind.to_owned(),
            bullet,
            items: vec![text0],
        };
        for (j, line) in lines.iter().enumerate().skip(i + 1) {
            let c = line.content;
            let width = indent(c).1;
            if c.chars().all(is_ws) {
                continue;
            }
            if fence_open(c).is_some() || (thematic_break(c) && width <= base) {
                break;
            }
            if generic_list(c) && width >= base {
                if let Some((_, t)) = item(c) {
                    list.items.push(t);
                }
            } else if width <= base {
                break;
            }
            list.last_line = j;
        }
        return Some(list);
    }
    None
}

/// Whether the body ends inside an unclosed fenced block (front matter skipped).
pub fn ends_inside_fence(text: &str) -> bool {
    let lines = lines(text);
    let mut fence = None;
    for line in &lines[front_matter_len(&lines)..] {
        match fence {
            Some(f) if fence_close(line.content, f) => fence = None,
            Some(_) => {}
            None => fence = fence_open(line.content),
        }
    }
    fence.is_some()
}

/// Runs of W replaced by one space, ends trimmed (WL-38).
pub fn collapse(s: &str) -> String {
    s.split(is_ws)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// §7 and §9 in the model: the text after appending an already normalized description, or `None`
/// for a duplicate. Rebuilds the text line by line instead of splicing bytes.
pub fn append(text: &str, normalized: &str) -> Option<String> {
    let mark = if text.starts_with('\u{FEFF}') {
        "\u{FEFF}"
    } else {
        ""
    };
    let lines = lines(text);
    let joined = |ls: &[ModelLine<'_>]| {
        ls.iter()
            .map(|l| format!("{}{}", l.content, l.terminator))
            .collect::<String>()
    };
    let ending_at = |i: usize| -> &str {
        match lines[i].terminator {
            "" if i > 0 => lines[i - 1].terminator,
            "" => "\n",
            t => t,
        }
    };
    // Our decision beside WL-45: the break right after an unterminated line ending in a lone CR is
    // CRLF, so that the CR stays content (WL-24).
    let break_after = |i: usize| -> &str {
        if lines[i].content.ends_with('\r') {
            "\r\n"
        } else {
            ending_at(i)
        }
    };
    match checklist(text) {
        Some(list) => {
            if list.items.iter().any(|t| collapse(t) == normalized) {
                return None;
            }
            let indent = list.indent.replace('\r', " ");
            let new_line = format!("{indent}{} [x] {normalized}", list.bullet);
            let j = list.last_line;
            let head = joined(&lines[..=j]);
            let tail = joined(&lines[j + 1..]);
            Some(match lines[j].terminator {
                "" => format!("{mark}{head}{}{new_line}", break_after(j)),
                t => format!("{mark}{head}{new_line}{t}{tail}"),
            })
        }
        None => {
            let new_line = format!("- [x] {normalized}");
            let Some(last) = lines.last() else {
                return Some(format!("{mark}{new_line}"));
            };
            let e = ending_at(lines.len() - 1);
            let mut out = format!("{mark}{}", joined(&lines));
            if last.terminator.is_empty() {
                out.push_str(break_after(lines.len() - 1));
            }
            if !last.content.chars().all(is_ws) {
                out.push_str(e);
            }
            out.push_str(&new_line);
            out.push_str(last.terminator);
            Some(out)
        }
    }
}
