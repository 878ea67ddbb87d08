//! The page's files, embedded in the binary at build time: nothing is fetched from anywhere else, and
//! the page works on a machine with no network.
//!
//! - `index.html`: the page's frame (no data: the script fills it);
//! - `sign-in.html`: the sign-in form, with the place of one message;
//! - `app.js`: the one script, which reads the data documents and puts every value in the page as
//!   text (`textContent`, never markup), follows the event stream and says when it lost the server;
//! - `app.css`: the one style sheet, light and dark (`prefers-color-scheme`), usable at 360 px wide.

use shiftwork_watch::web::escape_markup;

/// The page's frame.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// The sign-in page; `<!--message-->` is where a message goes.
pub const SIGN_IN_HTML: &str = include_str!("assets/sign-in.html");
/// The page's script.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The page's style sheet.
pub const APP_CSS: &str = include_str!("assets/app.css");

/// The sign-in page, with `message` (escaped) when there is one.
///
/// ```
/// let page = shiftwork_mcp::http::ui::assets::sign_in_page(Some("no <b>such</b> token"));
/// assert!(page.contains("no &lt;b&gt;such&lt;/b&gt; token") && !page.contains("<b>"));
/// ```
pub fn sign_in_page(message: Option<&str>) -> String {
    let message = message
        .map(|m| format!("<p class=\"error\" role=\"alert\">{}</p>", escape_markup(m)))
        .unwrap_or_default();
    SIGN_IN_HTML.replace("<!--message-->", &message)
}
