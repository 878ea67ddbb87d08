//! The snapshot for a web page: the page's data document ([`document`], JSON built from a
//! [`crate::snapshot::Snapshot`]) and a plan drawn as an SVG picture ([`svg`]).
//!
//! Both are built for a page that must stay inert whatever the checkpoints and the store hold:
//!
//! * the document carries text only as JSON strings, already cleaned ([`crate::display_text::clean`]:
//!   no control or bidirectional character, bounded), for a page that puts them in the DOM as text,
//!   never as markup;
//! * the SVG is drawn here from the planner's waves, never from a text format another program parses:
//!   every text is written through [`escape_markup`], its elements and attributes are fixed (no
//!   `<script>`, no `style` element or attribute, no link, no `href`, no external reference), so it is
//!   a picture whatever a title says, and a page shows it as an image (`<img>`), where no script of
//!   an SVG ever runs.

pub mod document;
pub mod svg;

/// `text` written for markup (HTML or XML text, or a quoted attribute value): `&`, `<`, `>`, `"` and
/// `'` as character references, and every character that must not appear in a document — the
/// characters of the workspace's rule for text that reaches a person
/// ([`shiftwork_seams::echo::is_control_or_bidi`]: C0 including tabs and line breaks, DEL, C1, the
/// bidirectional controls) and the noncharacters U+FFFE and U+FFFF — as U+FFFD. What comes out is
/// text in any element and any quoted attribute.
///
/// ```
/// use shiftwork_watch::web::escape_markup;
/// assert_eq!(escape_markup(r#"<img src=x onerror="alert('1')">&"#),
///            "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;");
/// assert_eq!(escape_markup("\u{202e}evil\u{7}"), "\u{fffd}evil\u{fffd}");
/// ```
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            c if shiftwork_seams::echo::is_control_or_bidi(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}
