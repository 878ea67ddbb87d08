//! The JSON-RPC 2.0 wire format of `serve` (one message a line): one validating pass over a message
//! line that finds what the server needs — the id's token, the method, and for `tools/call` the
//! tool's name, the exact text of `arguments` with its top-level keys and `_meta.progressToken` —
//! without building a JSON tree.
//!
//! The pass accepts exactly the JSON of RFC 8259 within three limits: a line holds at most
//! [`MAX_LINE`] bytes (the line reader enforces it), nests at most [`MAX_DEPTH`] arrays and
//! objects, and escapes no lone UTF-16 surrogate (`"\ud800"` is JSON syntax but no text: no decoder
//! downstream could take it). A line that fails is answered with a JSON-RPC error naming what was
//! wrong and where, carrying the request's id when the line shows one ([`recover_id`]).
//!
//! ```
//! use shiftwork_mcp::wire::{self, Message};
//!
//! let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"b":1,"a":[2]}}}"#;
//! let Some(Message::Request { id, method, params }) = wire::decode(line).unwrap() else { panic!() };
//! assert_eq!((id.raw(), method.as_ref()), ("7", "tools/call"));
//! let arguments = params.arguments.unwrap().unwrap();
//! assert_eq!(arguments.text, r#"{"b":1,"a":[2]}"#);
//! assert_eq!(arguments.keys, ["b", "a"]);
//!
//! let refused = wire::decode(br#"{"id": 8, "method": "ping", "params": {"x": "\udc00"}}"#).unwrap_err();
//! assert_eq!((refused.code, refused.id.as_deref()), (wire::PARSE_ERROR, Some("8")));
//! ```

use std::borrow::Cow;

/// The longest message line the server reads (16 MiB, without its newline).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// The deepest nesting of arrays and objects a message may have (the message object is level 1).
pub const MAX_DEPTH: usize = 128;

/// JSON-RPC: the line is not JSON (or not within the limits of this module).
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: the JSON is not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// JSON-RPC: the method's parameters are wrong.
pub const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC: the server failed.
pub const INTERNAL_ERROR: i32 = -32603;
/// MCP 2026-07-28: an HTTP routing header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) does not
/// agree with the request's body.
pub const HEADER_MISMATCH: i32 = -32020;
/// MCP 2026-07-28: the request's protocol version is not one the server speaks (`data` names them).
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// One decoded message line.
#[derive(Debug)]
pub enum Message<'a> {
    /// A request: it gets exactly one response.
    Request {
        /// Its id.
        id: Id<'a>,
        /// Its method.
        method: Cow<'a, str>,
        /// What the server reads of its params.
        params: Params<'a>,
    },
    /// A notification: never answered.
    Notification {
        /// Its method.
        method: Cow<'a, str>,
        /// What the server reads of its params.
        params: Params<'a>,
    },
    /// A response or error sent by the client (the server sends no requests, so it is ignored).
    Response,
}

/// A request id as sent: the JSON token of a string or a number, echoed unchanged in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id<'a>(&'a str);

impl<'a> Id<'a> {
    /// The JSON token (`7`, `"abc"`).
    pub fn raw(&self) -> &'a str {
        self.0
    }

    /// The id as a comparable key: `"1"` and `1` differ; `"\u0061"` and `"a"` are the same.
    pub fn key(&self) -> IdKey {
        id_key(self.0)
    }
}

/// A request id in a form that compares as JSON-RPC ids do (for `notifications/cancelled`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    /// A number, by its token.
    Number(String),
    /// A string, decoded.
    String(String),
}

impl IdKey {
    /// The key of an id token (a JSON string or number, as [`Params::request_id`] holds it).
    pub fn of(token: &str) -> IdKey {
        id_key(token)
    }
}

/// Whether a number token is an id clients can take back: an integer of 64 bits (signed or not), as
/// every MCP SDK holds ids. A fraction or a number beyond is refused, so that no answer carries an id
/// its client cannot read.
fn integer_id(token: &str) -> bool {
    token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok()
}

/// The key of an id token known to be a JSON string or number.
fn id_key(token: &str) -> IdKey {
    if token.starts_with('"') {
        let mut scan = Scan::new(token.as_bytes());
        match scan.string() {
            Ok(text) => IdKey::String(text.into_owned()),
            Err(_) => IdKey::String(token.to_owned()),
        }
    } else {
        IdKey::Number(token.to_owned())
    }
}

/// What a member of `params` held, when it was not of the type the server reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    /// The kind with its article, for a sentence: "an array".
    pub fn described(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// The `arguments` object of a `tools/call`: its exact text and its keys in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentsText<'a> {
    /// The text of the object, exactly as sent.
    pub text: &'a str,
    /// Its member names in arrival order (decoded; repeated names appear again).
    pub keys: Vec<Cow<'a, str>>,
    /// The byte offset (in `text`) of the first number beyond the range of a double, which no
    /// `serde_json` value holds: such arguments are refused, never rounded to a changed number.
    pub beyond_double: Option<usize>,
}

/// The sentence refusing arguments whose number at `offset` is beyond the range of a double.
pub fn beyond_double_sentence(offset: usize) -> String {
    format!(
        "the number at byte {offset} of arguments is beyond the range of a double (about 1.8e308); send it as a string"
    )
}

/// Reads the JSON text of an `arguments` object on its own (the argument of `call`): its keys in
/// arrival order. The error says what is wrong (not JSON, not an object, a number beyond a double).
pub fn arguments(text: &str) -> Result<ArgumentsText<'_>, String> {
    let mut scan = Scan::new(text.as_bytes());
    scan.ws();
    let start = scan.pos;
    let found = match scan.peek() {
        Some(b'{') => scan.arguments_object().map(Some),
        _ => scan.value().map(|_| None),
    };
    let parsed = found.and_then(|found| {
        let end = scan.pos;
        scan.ws();
        if scan.at_end() {
            Ok(found.map(|keys| (keys, end)))
        } else {
            Err(ScanError::Trailing { at: scan.pos })
        }
    });
    match parsed {
        Err(e) => Err(format!("the arguments are not valid JSON: {}", e.describe())),
        Ok(None) => Err(String::from("the arguments must be a JSON object")),
        Ok(Some((keys, end))) => match scan.overflow {
            Some(at) => Err(beyond_double_sentence(at - start)),
            None => Ok(ArgumentsText {
                text: &text[start..end],
                keys,
                beyond_double: None,
            }),
        },
    }
}

/// What the server reads of a message's `params`; every other member is validated and skipped.
#[derive(Debug, Default)]
pub struct Params<'a> {
    /// What `params` was: `None` when absent.
    pub shape: Option<Kind>,
    /// `params.name` (tools/call): a string, or the kind it was instead.
    pub name: Option<Result<Cow<'a, str>, Kind>>,
    /// `params.arguments` (tools/call): an object, or the kind it was instead.
    pub arguments: Option<Result<ArgumentsText<'a>, Kind>>,
    /// `params._meta.progressToken`: the token of a string or a number.
    pub progress_token: Option<&'a str>,
    /// `params.requestId` (notifications/cancelled): the token of a string or a number.
    pub request_id: Option<&'a str>,
    /// `params.protocolVersion` (initialize), when a string.
    pub protocol_version: Option<Cow<'a, str>>,
    /// The per-request envelope of MCP 2026-07-28, when `params._meta` carries its protocol version
    /// key (that key alone marks a request of the stateless protocol).
    pub envelope: Option<Envelope<'a>>,
    /// `params._meta.traceparent` (W3C trace context), when a string.
    pub traceparent: Option<Cow<'a, str>>,
    /// `params._meta.tracestate`, when a string.
    pub tracestate: Option<Cow<'a, str>>,
    /// `params._meta.baggage`, when a string.
    pub baggage: Option<Cow<'a, str>>,
    /// The JSON text of `params`, when it is an object: the methods other than `tools/call`
    /// (resources, prompts, completion, tasks) read their few members from it.
    pub text: Option<&'a str>,
}

/// The per-request envelope of MCP 2026-07-28: what `params._meta` says of the client, under the
/// protocol's reserved keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// `io.modelcontextprotocol/protocolVersion`: a string, or the kind it was instead.
    pub version: Result<Cow<'a, str>, Kind>,
    /// `io.modelcontextprotocol/clientCapabilities`, when present: the kind it was.
    pub capabilities: Option<Kind>,
}

/// The `_meta` key of the protocol version of a 2026-07-28 request.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities on a 2026-07-28 request.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the server's identity on a 2026-07-28 result.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A message the server cannot process: answered with this JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The JSON-RPC error code.
    pub code: i32,
    /// The error message (never more than a short quote of the input).
    pub message: String,
    /// The id token to answer with, when the message showed one; the answer has no `id` otherwise.
    pub id: Option<String>,
    /// The error's `data`, as JSON text, when it has one.
    pub data: Option<String>,
}

impl Refusal {
    fn new(code: i32, message: impl Into<String>, id: Option<&str>) -> Self {
        Refusal {
            code,
            message: message.into(),
            id: id.map(str::to_owned),
            data: None,
        }
    }
}

/// Decodes one message line (without its newline). `Ok(None)` for a blank line, which is no message.
pub fn decode(line: &[u8]) -> Result<Option<Message<'_>>, Refusal> {
    decode_with(line, &mut |_| None)
}

/// A reader of a `tools/call`'s `arguments` object that does the tool's own reading while the line is
/// decoded, so that the bulk of a request is read once. Given the text from the opening brace to the
/// end of the line, it answers how many bytes the object took and its member names in arrival order,
/// or `None` to leave the object to the decoder.
///
/// Its contract: every text it takes is a valid JSON object ending with its closing brace, nesting at
/// most 8 levels, and holding no number beyond the range of a double. The decoder then does not
/// validate those bytes again; a length that does not end on a closing brace inside the text is
/// ignored and the object is validated as usual.
pub type ArgumentsReader<'a, 'r> = dyn FnMut(&'a str) -> Option<(usize, Vec<Cow<'a, str>>)> + 'r;

/// [`decode`], with `arguments` objects offered to `reader` first (see [`ArgumentsReader`]).
pub fn decode_with<'a>(
    line: &'a [u8],
    reader: &mut ArgumentsReader<'a, '_>,
) -> Result<Option<Message<'a>>, Refusal> {
    let parse_error = |detail: String| Refusal::new(PARSE_ERROR, format!("Parse error: {detail}"), None);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            let mut refusal = parse_error(format!("the line is not UTF-8 (at byte {})", e.valid_up_to()));
            refusal.id = recover_id(line);
            return Err(refusal);
        }
    };
    let mut scan = Scan::new(line);
    scan.utf8 = Some(text);
    scan.ws();
    if scan.at_end() {
        return Ok(None);
    }
    let top = match scan.message(reader) {
        Ok(top) => top,
        Err(e) => {
            let mut refusal = parse_error(e.describe());
            refusal.id = recover_id(line);
            return Err(refusal);
        }
    };
    let Top::Object(fields) = top else {
        let detail = match top {
            Top::Array => {
                "JSON-RPC batches are not supported (no protocol version this server agrees to has them): send one message at a time"
            }
            _ => "a JSON-RPC message must be a JSON object",
        };
        return Err(Refusal::new(
            INVALID_REQUEST,
            format!("Invalid request: {detail}"),
            None,
        ));
    };
    let id = match fields.id {
        Some(Ok(token)) => Some(token),
        Some(Err(what)) => {
            return Err(Refusal::new(
                INVALID_REQUEST,
                format!("Invalid request: the id must be a string or an integer, not {what}"),
                None,
            ));
        }
        None => None,
    };
    let invalid = |detail: &str| Refusal::new(INVALID_REQUEST, format!("Invalid request: {detail}"), id);
    match fields.jsonrpc {
        Some(true) => {}
        Some(false) => return Err(invalid("\"jsonrpc\" must be \"2.0\"")),
        None => return Err(invalid("the member \"jsonrpc\": \"2.0\" is missing")),
    }
    match (fields.method, id) {
        (Some(Ok(method)), Some(id)) => Ok(Some(Message::Request {
            id: Id(id),
            method,
            params: fields.params,
        })),
        (Some(Ok(method)), None) => Ok(Some(Message::Notification {
            method,
            params: fields.params,
        })),
        (Some(Err(kind)), _) => Err(invalid(&format!(
            "the method must be a string, not {}",
            kind.described()
        ))),
        (None, _) if fields.response => Ok(Some(Message::Response)),
        (None, _) => Err(invalid("the member \"method\" is missing")),
    }
}

/// Whether `text` is one JSON value (within this module's limits) and nothing else but whitespace.
pub fn is_json(text: &str) -> bool {
    let mut scan = Scan::new(text.as_bytes());
    scan.ws();
    scan.value().is_ok() && {
        scan.ws();
        scan.at_end()
    }
}

/// The id token of a message that could not be decoded whole, when its top level shows one: a lenient
/// walk over the members of the top-level object (as far as the text goes) that takes the value of
/// `"id"` when it is a well-formed string or number followed by a delimiter (the last such member,
/// wherever it stands). [`IdFinder`] is the same walk over a text given in pieces.
pub fn recover_id(line: &[u8]) -> Option<String> {
    let mut finder = IdFinder::new();
    finder.feed(line);
    finder.finish()
}

/// [`recover_id`] over a text that arrives in pieces, in constant memory: how the id of a line too
/// long to keep is found, wherever in the line it stands (some clients write `id` last). The pieces
/// are walked once; only the id's token is kept, up to [`MAX_RECOVERED_ID`] bytes.
///
/// ```
/// use shiftwork_mcp::wire::IdFinder;
/// let mut finder = IdFinder::new();
/// for piece in [&br#"{"method":"x","params":{"a":"}"#[..], br#"\"","b":[1,{"id":2}]},"#, br#""id" : 7 }"#] {
///     finder.feed(piece);
/// }
/// assert_eq!(finder.finish().as_deref(), Some("7"));
/// ```
#[derive(Debug, Default)]
pub struct IdFinder {
    state: FindState,
    /// Bytes of the current key, while it may still be `id` (at most 3: `id` and its quote).
    key: Vec<u8>,
    /// The current key is `id`.
    key_is_id: bool,
    /// The token of the current value, while it is the id's and short enough.
    token: Option<Vec<u8>>,
    /// Nesting within the current value, and where a string within it stands.
    depth: usize,
    in_string: bool,
    escaped: bool,
    found: Option<String>,
}

/// The longest id token [`IdFinder`] keeps.
pub const MAX_RECOVERED_ID: usize = 64 * 1024;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum FindState {
    /// Before the top-level `{`.
    #[default]
    Start,
    /// Before a key (after `{` or `,`).
    Key,
    /// Within a key's string.
    InKey,
    /// After a key, before its `:`.
    Colon,
    /// After a `:`, before the value.
    Value,
    /// Within a value: up to the next `,` or `}` outside brackets and strings.
    InValue,
    /// The walk is over.
    Done,
}

impl IdFinder {
    /// A finder at the start of a text.
    pub fn new() -> Self {
        IdFinder::default()
    }

    /// Walks the next piece of the text.
    pub fn feed(&mut self, piece: &[u8]) {
        let mut i = 0;
        while i < piece.len() {
            if self.state == FindState::Done {
                return;
            }
            // The bulk of a long line is string content: skip it up to a quote or a backslash.
            if self.in_string && !self.escaped && self.token.is_none() {
                match memchr::memchr2(b'"', b'\\', &piece[i..]) {
                    Some(at) => i += at,
                    None => return,
                }
            }
            let b = piece[i];
            i += 1;
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        match self.state {
            FindState::Start if ws => {}
            FindState::Start => {
                self.state = if b == b'{' {
                    FindState::Key
                } else {
                    FindState::Done
                }
            }
            FindState::Key if ws => {}
            FindState::Key if b == b'"' => {
                self.state = FindState::InKey;
                self.key.clear();
                self.key_is_id = false;
            }
            FindState::Key => self.state = FindState::Done,
            FindState::InKey => {
                if self.escaped {
                    self.escaped = false;
                    self.key.push(b'\\');
                } else if b == b'\\' {
                    self.escaped = true;
                    return;
                } else if b == b'"' {
                    self.key_is_id = self.key == b"id";
                    self.state = FindState::Colon;
                    return;
                }
                if self.key.len() < 3 {
                    self.key.push(b);
                }
            }
            FindState::Colon if ws => {}
            FindState::Colon => {
                self.state = if b == b':' {
                    FindState::Value
                } else {
                    FindState::Done
                }
            }
            FindState::Value if ws => {}
            FindState::Value => {
                self.state = FindState::InValue;
                self.token = self.key_is_id.then(Vec::new);
                self.value_byte(b);
            }
            FindState::InValue => self.value_byte(b),
            FindState::Done => {}
        }
    }

    /// One byte of a value, skipped without judging it: up to the next `,` or `}` outside brackets
    /// and strings.
    fn value_byte(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
        } else {
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => self.depth += 1,
                b']' | b'}' if self.depth > 0 => self.depth -= 1,
                b',' | b'}' if self.depth == 0 => {
                    self.end_value();
                    self.state = if b == b',' {
                        FindState::Key
                    } else {
                        FindState::Done
                    };
                    return;
                }
                _ => {}
            }
        }
        if let Some(token) = &mut self.token {
            if token.len() < MAX_RECOVERED_ID {
                token.push(b);
            } else {
                self.token = None;
            }
        }
    }

    /// The value ended at a delimiter: when it was the id's, it counts if it is one well-formed string
    /// or integer.
    fn end_value(&mut self) {
        let Some(token) = self.token.take() else {
            return;
        };
        let end = token
            .iter()
            .rposition(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .map_or(0, |p| p + 1);
        let token = &token[..end];
        let mut probe = Scan::new(token);
        let ok = match token.first() {
            Some(b'"') => probe.skip_string().is_ok(),
            Some(b'-' | b'0'..=b'9') => {
                probe.number().is_ok() && std::str::from_utf8(token).is_ok_and(integer_id)
            }
            _ => false,
        };
        if ok && probe.pos == token.len() {
            self.found = std::str::from_utf8(token).ok().map(str::to_owned);
        }
    }

    /// The id found: the last `"id"` member whose value was a well-formed string or integer followed
    /// by a delimiter.
    pub fn finish(self) -> Option<String> {
        self.found
    }
}

/// What the top level of a line was.
// One value on the stack while a line is decoded, moved once: its size costs nothing.
#[allow(clippy::large_enum_variant)]
enum Top<'a> {
    Object(Fields<'a>),
    Array,
    Other,
}

/// The members of the message object the server reads.
#[derive(Default)]
struct Fields<'a> {
    jsonrpc: Option<bool>,
    /// The id token, or what it was instead of a string or an integer.
    id: Option<Result<&'a str, &'static str>>,
    method: Option<Result<Cow<'a, str>, Kind>>,
    params: Params<'a>,
    response: bool,
}

/// Why a line is not JSON within the limits: small and `Copy`, so that every `Scanned` result of
/// the hot loop travels in registers.
#[derive(Debug, Clone, Copy)]
enum ScanError {
    Syntax { expected: Expect, at: usize },
    TooDeep { at: usize },
    LoneSurrogate { at: usize },
    Trailing { at: usize },
}

/// What the reader expected where a line went wrong.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Value,
    Literal,
    Digit,
    FractionDigit,
    ExponentDigit,
    Key,
    Colon,
    CommaOrBrace,
    CommaOrBracket,
    ClosingQuote,
    NoControl,
    Escape,
    Hex,
}

impl Expect {
    fn text(self) -> &'static str {
        match self {
            Expect::Value => "a JSON value",
            Expect::Literal => "true, false or null",
            Expect::Digit => "a digit",
            Expect::FractionDigit => "a digit after '.'",
            Expect::ExponentDigit => "a digit of the exponent",
            Expect::Key => "a string key",
            Expect::Colon => "':'",
            Expect::CommaOrBrace => "',' or '}'",
            Expect::CommaOrBracket => "',' or ']'",
            Expect::ClosingQuote => "'\"' closing the string",
            Expect::NoControl => "no control character inside a string (escape it)",
            Expect::Escape => "an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX",
            Expect::Hex => "four hex digits",
        }
    }
}

impl ScanError {
    fn describe(&self) -> String {
        match self {
            ScanError::Syntax { expected, at } => {
                format!("the line is not JSON: expected {} at byte {at}", expected.text())
            }
            ScanError::TooDeep { at } => {
                format!("the message nests deeper than {MAX_DEPTH} levels (at byte {at})")
            }
            ScanError::LoneSurrogate { at } => {
                format!("a string escapes a lone UTF-16 surrogate (at byte {at})")
            }
            ScanError::Trailing { at } => format!("unexpected text after the message at byte {at}"),
        }
    }
}

type Scanned<T> = Result<T, ScanError>;

/// The validating cursor over a line's bytes (known to be UTF-8 when [`decode`] uses it).
struct Scan<'a> {
    s: &'a [u8],
    /// `s` as text, when it was checked to be UTF-8 as a whole.
    utf8: Option<&'a str>,
    pos: usize,
    depth: usize,
    /// Where the first number beyond the range of a double starts.
    overflow: Option<usize>,
}

impl<'a> Scan<'a> {
    fn new(s: &'a [u8]) -> Self {
        Scan {
            s,
            utf8: None,
            pos: 0,
            depth: 0,
            overflow: None,
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn fail<T>(&self, expected: Expect) -> Scanned<T> {
        Err(ScanError::Syntax {
            expected,
            at: self.pos,
        })
    }

    fn text(&self, start: usize, end: usize) -> &'a str {
        // The line was checked to be UTF-8 as a whole, and every span taken here starts and ends at a
        // JSON token boundary (an ASCII byte), so it is UTF-8 too.
        match self.utf8 {
            Some(text) => text.get(start..end).unwrap_or_default(),
            None => std::str::from_utf8(&self.s[start..end]).unwrap_or_default(),
        }
    }

    /// The whole line: one value and nothing after it but whitespace.
    fn message(&mut self, reader: &mut ArgumentsReader<'a, '_>) -> Scanned<Top<'a>> {
        let top = match self.peek() {
            Some(b'{') => Top::Object(self.message_object(reader)?),
            Some(b'[') => {
                self.value()?;
                Top::Array
            }
            _ => {
                self.value()?;
                Top::Other
            }
        };
        self.ws();
        if !self.at_end() {
            return Err(ScanError::Trailing { at: self.pos });
        }
        Ok(top)
    }

    fn message_object(&mut self, reader: &mut ArgumentsReader<'a, '_>) -> Scanned<Fields<'a>> {
        let mut fields = Fields::default();
        self.object(|scan, key| {
            match key.as_ref() {
                "jsonrpc" => {
                    fields.jsonrpc = Some(match scan.peek() {
                        Some(b'"') => scan.string()? == "2.0",
                        _ => {
                            scan.value()?;
                            false
                        }
                    });
                }
                "id" => {
                    let start = scan.pos;
                    let kind = scan.value()?;
                    let token = scan.text(start, scan.pos);
                    fields.id = Some(match kind {
                        Kind::String => Ok(token),
                        Kind::Number if integer_id(token) => Ok(token),
                        Kind::Number => Err("a number that is no 64-bit integer"),
                        other => Err(other.described()),
                    });
                }
                "method" => {
                    fields.method = Some(match scan.peek() {
                        Some(b'"') => Ok(scan.string()?),
                        _ => Err(scan.value()?),
                    });
                }
                "params" => {
                    let start = scan.pos;
                    fields.params = match scan.peek() {
                        Some(b'{') => {
                            let mut params = scan.params(reader)?;
                            params.text = Some(scan.text(start, scan.pos));
                            params
                        }
                        _ => Params {
                            shape: Some(scan.value()?),
                            ..Params::default()
                        },
                    };
                }
                "result" | "error" => {
                    scan.value()?;
                    fields.response = true;
                }
                _ => {
                    scan.value()?;
                }
            }
            Ok(())
        })?;
        Ok(fields)
    }

    fn params(&mut self, reader: &mut ArgumentsReader<'a, '_>) -> Scanned<Params<'a>> {
        let mut params = Params {
            shape: Some(Kind::Object),
            ..Params::default()
        };
        self.object(|scan, key| {
            match key.as_ref() {
                "name" => {
                    params.name = Some(match scan.peek() {
                        Some(b'"') => Ok(scan.string()?),
                        _ => Err(scan.value()?),
                    });
                }
                "arguments" => {
                    params.arguments = Some(match scan.peek() {
                        Some(b'{') if let Some(read) = scan.read_arguments(reader) => Ok(read),
                        Some(b'{') => {
                            let start = scan.pos;
                            let before = scan.overflow.take();
                            let keys = scan.arguments_object()?;
                            let beyond_double = scan.overflow.map(|at| at - start);
                            scan.overflow = before.or(scan.overflow);
                            Ok(ArgumentsText {
                                text: scan.text(start, scan.pos),
                                keys,
                                beyond_double,
                            })
                        }
                        _ => Err(scan.value()?),
                    });
                }
                "_meta" if scan.peek() == Some(b'{') => {
                    let mut version = None;
                    let mut capabilities = None;
                    scan.object(|scan, key| {
                        if key == META_PROTOCOL_VERSION {
                            version = Some(match scan.peek() {
                                Some(b'"') => Ok(scan.string()?),
                                _ => Err(scan.value()?),
                            });
                            return Ok(());
                        }
                        if scan.peek() == Some(b'"') {
                            let slot = match key.as_ref() {
                                "traceparent" => Some(&mut params.traceparent),
                                "tracestate" => Some(&mut params.tracestate),
                                "baggage" => Some(&mut params.baggage),
                                _ => None,
                            };
                            if let Some(slot) = slot {
                                *slot = Some(scan.string()?);
                                return Ok(());
                            }
                        }
                        let start = scan.pos;
                        let kind = scan.value()?;
                        if key == "progressToken" && matches!(kind, Kind::String | Kind::Number) {
                            params.progress_token = Some(scan.text(start, scan.pos));
                        } else if key == META_CLIENT_CAPABILITIES {
                            capabilities = Some(kind);
                        }
                        Ok(())
                    })?;
                    params.envelope = version.map(|version| Envelope {
                        version,
                        capabilities,
                    });
                }
                "requestId" => {
                    let start = scan.pos;
                    if let Kind::String | Kind::Number = scan.value()? {
                        params.request_id = Some(scan.text(start, scan.pos));
                    }
                }
                "protocolVersion" if scan.peek() == Some(b'"') => {
                    params.protocol_version = Some(scan.string()?);
                }
                _ => {
                    scan.value()?;
                }
            }
            Ok(())
        })?;
        Ok(params)
    }

    /// The `arguments` object at the cursor as `reader` read it, the cursor then after it; `None`
    /// when the reader left it, or answered a length that does not end on a closing brace.
    fn read_arguments(&mut self, reader: &mut ArgumentsReader<'a, '_>) -> Option<ArgumentsText<'a>> {
        let start = self.pos;
        let rest = self.utf8?.get(start..)?;
        let (len, keys) = reader(rest)?;
        if len < 2 || rest.as_bytes().get(len - 1) != Some(&b'}') {
            return None;
        }
        self.pos = start + len;
        Some(ArgumentsText {
            text: self.text(start, self.pos),
            keys,
            beyond_double: None,
        })
    }

    /// The `arguments` object at the cursor: its keys in arrival order.
    fn arguments_object(&mut self) -> Scanned<Vec<Cow<'a, str>>> {
        let mut keys = Vec::new();
        self.object(|scan, key| {
            keys.push(key);
            scan.value().map(drop)
        })?;
        Ok(keys)
    }

    /// An object at the cursor; `member` is called with each key and must consume its value.
    fn object(&mut self, member: impl FnMut(&mut Self, Cow<'a, str>) -> Scanned<()>) -> Scanned<()> {
        self.members(Self::string, member)
    }

    /// An object at the cursor: `key` reads each key (decoding it or not), `member` gets it and must
    /// consume its value.
    fn members<K>(
        &mut self,
        mut key: impl FnMut(&mut Self) -> Scanned<K>,
        mut member: impl FnMut(&mut Self, K) -> Scanned<()>,
    ) -> Scanned<()> {
        self.enter()?;
        self.ws();
        if !self.eat(b'}') {
            loop {
                self.ws();
                if self.peek() != Some(b'"') {
                    return self.fail(Expect::Key);
                }
                let key = key(self)?;
                self.ws();
                if !self.eat(b':') {
                    return self.fail(Expect::Colon);
                }
                self.ws();
                member(self, key)?;
                self.ws();
                if self.eat(b',') {
                    continue;
                }
                if self.eat(b'}') {
                    break;
                }
                return self.fail(Expect::CommaOrBrace);
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn enter(&mut self) -> Scanned<()> {
        self.pos += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ScanError::TooDeep { at: self.pos - 1 });
        }
        Ok(())
    }

    /// An object at the cursor, validated and skipped (its keys are not decoded).
    fn skip_object(&mut self) -> Scanned<()> {
        self.members(Self::skip_string, |scan, ()| scan.value().map(drop))
    }

    /// Any value at the cursor, validated and skipped; returns its kind.
    fn value(&mut self) -> Scanned<Kind> {
        match self.peek() {
            Some(open @ (b'{' | b'['))
                if let Some((end, overflow)) = skip_container(self.s, self.pos, self.depth) =>
            {
                self.pos = end;
                if self.overflow.is_none() {
                    self.overflow = overflow;
                }
                Ok(if open == b'{' { Kind::Object } else { Kind::Array })
            }
            Some(b'{') => {
                self.skip_object()?;
                Ok(Kind::Object)
            }
            Some(b'[') => {
                self.enter()?;
                self.ws();
                if !self.eat(b']') {
                    loop {
                        self.ws();
                        self.value()?;
                        self.ws();
                        if self.eat(b',') {
                            continue;
                        }
                        if self.eat(b']') {
                            break;
                        }
                        return self.fail(Expect::CommaOrBracket);
                    }
                }
                self.depth -= 1;
                Ok(Kind::Array)
            }
            Some(b'"') => {
                self.skip_string()?;
                Ok(Kind::String)
            }
            Some(b't') => self.literal(b"true", Kind::Bool),
            Some(b'f') => self.literal(b"false", Kind::Bool),
            Some(b'n') => self.literal(b"null", Kind::Null),
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                Ok(Kind::Number)
            }
            _ => self.fail(Expect::Value),
        }
    }

    fn literal(&mut self, word: &'static [u8], kind: Kind) -> Scanned<Kind> {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(kind)
        } else {
            self.fail(Expect::Literal)
        }
    }

    fn number(&mut self) -> Scanned<()> {
        let start = self.pos;
        self.eat(b'-');
        let int_start = self.pos;
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return self.fail(Expect::Digit),
        }
        let int_digits = (self.pos - int_start) as i64;
        if self.eat(b'.') {
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.fail(Expect::FractionDigit);
            }
            self.digits();
        }
        let mut exponent: i64 = 0;
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            let negative = self.peek() == Some(b'-');
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return self.fail(Expect::ExponentDigit);
            }
            while let Some(d @ b'0'..=b'9') = self.peek() {
                exponent = exponent.saturating_mul(10).saturating_add(i64::from(d - b'0'));
                self.pos += 1;
            }
            if negative {
                exponent = -exponent;
            }
        }
        // An upper bound of the decimal exponent; only a token that may pass the double range is
        // parsed to tell (rare), and `serde_json` refuses those that do.
        if self.overflow.is_none() && int_digits.saturating_add(exponent) > 300 {
            let token = self.text(start, self.pos);
            if !token.parse::<f64>().is_ok_and(f64::is_finite) {
                self.overflow = Some(start);
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// A string at the cursor, validated and skipped.
    fn skip_string(&mut self) -> Scanned<()> {
        self.pos += 1;
        loop {
            // Eight bytes at a time to the next quote, backslash or control byte.
            self.pos += shiftwork_json::plain_run(&self.s[self.pos..]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.escape()?;
                }
                Some(_) => return self.fail(Expect::NoControl),
                None => return self.fail(Expect::ClosingQuote),
            }
        }
    }

    /// A string at the cursor, decoded (borrowed when it holds no escape).
    fn string(&mut self) -> Scanned<Cow<'a, str>> {
        let start = self.pos + 1;
        self.skip_string()?;
        let end = self.pos - 1;
        let raw = &self.s[start..end];
        if !raw.contains(&b'\\') {
            return Ok(Cow::Borrowed(self.text(start, end)));
        }
        let mut out = String::with_capacity(raw.len());
        let mut inner = Scan::new(self.s);
        inner.pos = start;
        while inner.pos < end {
            let next = self.s[inner.pos..end]
                .iter()
                .position(|&b| b == b'\\')
                .map_or(end, |o| inner.pos + o);
            out.push_str(self.text(inner.pos, next));
            inner.pos = next;
            if inner.pos < end {
                out.push(inner.escape()?);
            }
        }
        Ok(Cow::Owned(out))
    }

    /// The escape at the cursor (a backslash), validated; returns the character it stands for.
    fn escape(&mut self) -> Scanned<char> {
        let at = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let unit = self.hex4()?;
                return match unit {
                    0xD800..=0xDBFF => {
                        if self.s[self.pos..].starts_with(b"\\u") {
                            self.pos += 2;
                            let low = self.hex4()?;
                            if (0xDC00..=0xDFFF).contains(&low) {
                                let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                return char::from_u32(code).ok_or(ScanError::LoneSurrogate { at });
                            }
                        }
                        Err(ScanError::LoneSurrogate { at })
                    }
                    0xDC00..=0xDFFF => Err(ScanError::LoneSurrogate { at }),
                    _ => char::from_u32(unit).ok_or(ScanError::LoneSurrogate { at }),
                };
            }
            _ => return self.fail(Expect::Escape),
        };
        self.pos += 1;
        Ok(c)
    }

    fn hex4(&mut self) -> Scanned<u32> {
        let Some(digits) = self.s.get(self.pos..self.pos + 4) else {
            return self.fail(Expect::Hex);
        };
        let mut unit = 0;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return self.fail(Expect::Hex),
            };
            unit = unit * 16 + u32::from(v);
        }
        self.pos += 4;
        Ok(unit)
    }
}

/// The end of the array or object at `start` and where its first number beyond a double starts,
/// when it is valid JSON and, with the `depth` levels it is in, nests at most [`MAX_DEPTH`] deep;
/// `None` otherwise, and the scanner then reads it again to name the fault.
///
/// The one pass that validates the bulk of a request (a tool's arguments): a loop over the bytes with
/// an explicit stack, where [`Scan::value`] recurses and decodes keys. It is stricter than it needs to
/// be only in declining a lone surrogate escape, which the scanner refuses too.
fn skip_container(s: &[u8], start: usize, depth: usize) -> Option<(usize, Option<usize>)> {
    // `true` for an object, per open level.
    let mut open = [false; MAX_DEPTH + 1];
    let mut levels = 0usize;
    let mut overflow = None;
    let mut i = start;
    let ws = |i: &mut usize| {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = s.get(*i) {
            *i += 1;
        }
    };
    // An object key and its colon, at `i` (after whitespace).
    let key = |i: &mut usize| -> Option<()> {
        if s.get(*i) != Some(&b'"') {
            return None;
        }
        *i = string_end(s, *i)?;
        ws(i);
        (s.get(*i) == Some(&b':')).then(|| *i += 1)
    };
    'value: loop {
        ws(&mut i);
        match *s.get(i)? {
            b @ (b'{' | b'[') => {
                if depth + levels >= MAX_DEPTH {
                    return None;
                }
                open[levels] = b == b'{';
                levels += 1;
                i += 1;
                ws(&mut i);
                match (b, *s.get(i)?) {
                    (b'{', b'}') | (b'[', b']') => {
                        i += 1;
                        levels -= 1;
                    }
                    (b'{', _) => {
                        key(&mut i)?;
                        continue 'value;
                    }
                    _ => continue 'value,
                }
            }
            b'"' => i = string_end(s, i)?,
            b'-' | b'0'..=b'9' => {
                let (end, beyond) = skip_number(s, i)?;
                if beyond && overflow.is_none() {
                    overflow = Some(i);
                }
                i = end;
            }
            b't' if s[i..].starts_with(b"true") => i += 4,
            b'f' if s[i..].starts_with(b"false") => i += 5,
            b'n' if s[i..].starts_with(b"null") => i += 4,
            _ => return None,
        }
        // After a value: close levels until one continues with a comma.
        loop {
            if levels == 0 {
                return Some((i, overflow));
            }
            ws(&mut i);
            let object = open[levels - 1];
            match *s.get(i)? {
                b',' => {
                    i += 1;
                    if object {
                        ws(&mut i);
                        key(&mut i)?;
                    }
                    continue 'value;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            i += 1;
            levels -= 1;
        }
    }
}

/// The end of the string at `start` (its opening quote), when it is a valid JSON string; `None` for
/// a control character, a bad escape, a lone surrogate or no closing quote.
fn string_end(s: &[u8], start: usize) -> Option<usize> {
    let mut scan = Scan::new(s);
    scan.pos = start;
    scan.skip_string().ok()?;
    Some(scan.pos)
}

/// The end of the number at `start`, and whether it may lie beyond the range of a double (as
/// [`Scan::number`] judges it); `None` when it is no JSON number.
fn skip_number(s: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut scan = Scan::new(s);
    scan.pos = start;
    scan.number().ok()?;
    Some((scan.pos, scan.overflow.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts iff serde_json accepts, outside this module's limits (nesting, surrogates).
    #[test]
    fn the_scanner_agrees_with_serde_json_on_json_syntax() {
        let wrap = |v: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"x":{v}}}}}"#);
        for value in [
            "1",
            "-0",
            "0.5",
            "1e10",
            "1E+2",
            "-1.5e-3",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "true",
            "fals",
            "null",
            "nul",
            "\"a\"",
            "\"\\u00e9\"",
            "\"\\x\"",
            "\"\t\"",
            "\"\\ud83d\\ude00\"",
            "[]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{}",
            "{\"a\"}",
            "{\"a\":1,}",
            "{1:2}",
            "{\"a\":[{\"b\":null}]}",
            "\"unterminated",
            "18446744073709551616",
            "1e308",
            "-1.7976931348623157e308",
            "1e-400",
        ] {
            let line = wrap(value);
            let ours = decode(line.as_bytes()).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(&line).is_ok();
            assert_eq!(ours, theirs, "{line}");
        }
    }

    /// Issue 27 item 15 (an id anywhere in a message, however long): the finder takes the top-level
    /// id wherever it stands, the last one when there are several, never one inside a value, and
    /// answers the same however the text is cut into pieces.
    #[test]
    fn the_top_level_id_is_found_wherever_it_stands_in_any_pieces() {
        let check = |text: &str, expected: Option<&str>| {
            assert_eq!(recover_id(text.as_bytes()).as_deref(), expected, "{text}");
            for cut in 1..text.len().min(40) {
                let mut finder = IdFinder::new();
                for piece in text.as_bytes().chunks(cut) {
                    finder.feed(piece);
                }
                assert_eq!(finder.finish().as_deref(), expected, "{text} in pieces of {cut}");
            }
        };
        for (text, expected) in [
            (r#"{"id":1,"method":"m"}"#, Some("1")),
            (
                r#"{"method":"m","params":{"x":"\"id\":5"},"id":"last"}"#,
                Some(r#""last""#),
            ),
            (r#"{"params":{"id":9,"a":[{"id":8}]}, "id" : -3 }"#, Some("-3")),
            (r#"{"id":1,"id":2}"#, Some("2")),
            (r#"{"id":1,"x":[1,2}"#, Some("1")),
            (r#"{"id":1.5}"#, None),
            (r#"{"id":18446744073709551616}"#, None),
            (r#"{"id":null}"#, None),
            (r#"{"id":{"a":1}}"#, None),
            (r#"{"id":"a\u0041"}"#, Some(r#""a\u0041""#)),
            (r#"{"id":7"#, None),
            (r#"{"i\u0064":7}"#, None),
            (r#"{"idx":7,"xid":8}"#, None),
            (r#"[{"id":1}]"#, None),
            (r#"  {"a":"}{","id":"x y"}"#, Some(r#""x y""#)),
        ] {
            check(text, expected);
        }
        let long = format!(r#"{{"params":{{"x":"{}"}},"id":42}}"#, "y".repeat(1 << 20));
        check(&long, Some("42"));
        let huge_id = format!(r#"{{"id":"{}"}}"#, "z".repeat(MAX_RECOVERED_ID));
        check(&huge_id, None);
    }

    #[test]
    fn limits_of_issue_12_item_12_are_parse_errors_with_the_id_when_it_shows() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"d","method":"m","params":{}{}}}"#,
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let refusal = decode(deep.as_bytes()).unwrap_err();
        assert_eq!(refusal.code, PARSE_ERROR);
        assert_eq!(refusal.id.as_deref(), Some("\"d\""));
        assert!(refusal.message.contains("deeper than 128"), "{}", refusal.message);
        let fits = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#,
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(decode(fits.as_bytes()).is_ok());
        for (line, id) in [
            (
                r#"{"jsonrpc":"2.0","method":"m","id":3,"params":"\ud800"}"#,
                Some("3"),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"m","params":"\ud800x","id":3}"#,
                Some("3"),
            ),
            (
                r#"{"jsonrpc":"2.0","params":"\udc00\ud800","id":-45,"method":"m"}"#,
                Some("-45"),
            ),
            (r#"{"params":"\udc00","id":1e999,"method":"m"}"#, None),
            (r#"{"params":"\udc00","id":2.5,"method":"m"}"#, None),
            (r#"{"params":"\ud800\u0041","id":"x"}"#, Some("\"x\"")),
            (r#"{"id":[1],"params":"\ud800"}"#, None),
            (r#"not json"#, None),
            (r#"{"id": 5, "method": "#, Some("5")),
            (r#"{"id": 5"#, None),
        ] {
            let refusal = decode(line.as_bytes()).unwrap_err();
            assert_eq!(refusal.code, PARSE_ERROR, "{line}");
            assert_eq!(refusal.id.as_deref(), id, "{line}");
        }
        let pair = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":"\ud83d\ude00"}}"#;
        assert!(decode(pair.as_bytes()).is_ok());
        let not_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xff\"}";
        assert_eq!(decode(not_utf8).unwrap_err().id.as_deref(), Some("9"));
    }

    /// Issue 12 item 6: a number no double holds is found, never rounded; every other one passes.
    #[test]
    fn numbers_beyond_a_double_are_found_in_arguments() {
        for (text, expected) in [
            (r#"{"a": 1e400}"#, Some(6)),
            (r#"{"a": [0, -2e308]}"#, Some(10)),
            (r#"{"a": 0.5e309}"#, Some(6)),
            (
                r#"{"a": 1797693134862315700000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000}"#,
                Some(6),
            ),
            (
                r#"{"a": 1.7976931348623157e308, "b": 1e-400, "c": 18446744073709551616}"#,
                None,
            ),
        ] {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{text}}}}}"#
            );
            let Some(Message::Request { params, .. }) = decode(line.as_bytes()).unwrap() else {
                panic!("a request")
            };
            assert_eq!(
                params.arguments.unwrap().unwrap().beyond_double,
                expected,
                "{text}"
            );
            assert_eq!(
                arguments(text).err(),
                expected.map(beyond_double_sentence),
                "{text}"
            );
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(text).is_ok(),
                expected.is_none(),
                "{text}"
            );
        }
        assert_eq!(arguments(" {\"a\": 1} ").unwrap().keys, ["a"]);
        assert_eq!(
            arguments("[1, 2]").unwrap_err(),
            "the arguments must be a JSON object"
        );
        assert!(
            arguments("{")
                .unwrap_err()
                .starts_with("the arguments are not valid JSON")
        );
    }

    #[test]
    fn invalid_requests_name_the_fault() {
        for (line, code, id, says) in [
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
                INVALID_REQUEST,
                None,
                "batches",
            ),
            (r#""text""#, INVALID_REQUEST, None, "JSON object"),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
                "not a boolean",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
                "not null",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
                "64-bit integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
                INVALID_REQUEST,
                None,
                "64-bit integer",
            ),
            (
                r#"{"id":2,"method":"ping"}"#,
                INVALID_REQUEST,
                Some("2"),
                "\"jsonrpc\"",
            ),
            (
                r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
                INVALID_REQUEST,
                Some("2"),
                "\"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":5}"#,
                INVALID_REQUEST,
                Some("2"),
                "a number",
            ),
            (
                r#"{"jsonrpc":"2.0","id":10}"#,
                INVALID_REQUEST,
                Some("10"),
                "\"method\"",
            ),
        ] {
            let refusal = decode(line.as_bytes()).unwrap_err();
            assert_eq!((refusal.code, refusal.id.as_deref()), (code, id), "{line}");
            assert!(refusal.message.contains(says), "{line}: {}", refusal.message);
        }
    }

    #[test]
    fn a_request_yields_its_id_method_and_the_members_of_params_the_server_reads() {
        let line = br#" {"params": {"_meta": {"progressToken": "p1", "x": [1]}, "arguments": {"a\u0062": {"c": "}"}, "d": []}, "name": "work_plan"}, "method": "tools/call", "id": "r\u0031", "jsonrpc": "2.0"} "#;
        let Some(Message::Request { id, method, params }) = decode(line).unwrap() else {
            panic!("a request")
        };
        assert_eq!(id.raw(), r#""r\u0031""#);
        assert_eq!(id.key(), IdKey::String(String::from("r1")));
        assert_eq!(method, "tools/call");
        assert_eq!(params.name, Some(Ok(Cow::Borrowed("work_plan"))));
        assert_eq!(params.progress_token, Some("\"p1\""));
        let arguments = params.arguments.unwrap().unwrap();
        assert_eq!(arguments.text, r#"{"a\u0062": {"c": "}"}, "d": []}"#);
        assert_eq!(arguments.keys, ["ab", "d"]);
        let Some(Message::Request { params, .. }) = decode(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3,"arguments":[1,2]}}"#,
        )
        .unwrap() else {
            panic!("a request")
        };
        assert_eq!(params.name, Some(Err(Kind::Number)));
        assert_eq!(params.arguments, Some(Err(Kind::Array)));
        let cancelled = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}"#;
        let Some(Message::Notification { params, .. }) = decode(cancelled).unwrap() else {
            panic!("a notification")
        };
        assert_eq!(params.request_id, Some("12"));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Some(Message::Response))
        ));
        assert!(matches!(decode(b"  \r"), Ok(None)));
    }

    /// The one-pass validator of containers against serde_json, on texts mutated from valid ones:
    /// it accepts exactly what serde accepts (given it as the whole text), ends where the value
    /// ends, and finds the number beyond a double that the scanner finds. Issue 16 item 1 made it the
    /// path of every argument's bytes.
    #[test]
    fn skip_container_accepts_what_serde_accepts_and_ends_where_the_value_ends() {
        let seeds = [
            r#"{"nodes": [{"id": "n1", "depends_on": ["n0", "n2"], "priority": -12}, {"id": "n2"}]}"#,
            r#"[1, -0.5e3, true, false, null, "a\"b\\c\u00e9\ud83d\ude00", {"": [], "k": {}}]"#,
            r#"{"a": {"b": {"c": [[[1e400, 2]]]}}, "s": "x\ny", "n": 18446744073709551616}"#,
            r#"[{"x": 1.5, "y": "é"}, [], {}, [[], [{}]], 0, 1E+2, -1.7976931348623157e308]"#,
        ];
        let alphabet: &[u8] = b"{}[],:\" 0123456789-+.eEtrufalsn\\u\t\n\x01ab";
        let mut rng = fastrand::Rng::with_seed(16);
        for case in 0..30_000 {
            let mut text: Vec<u8> = seeds[case % seeds.len()].as_bytes().to_vec();
            for _ in 0..rng.usize(0..4) {
                let at = rng.usize(0..text.len());
                match rng.u8(0..3) {
                    0 => {
                        text.remove(at);
                    }
                    1 => text.insert(at, alphabet[rng.usize(0..alphabet.len())]),
                    _ => text[at] = alphabet[rng.usize(0..alphabet.len())],
                }
                if text.is_empty() {
                    text.push(b'[');
                }
            }
            let Ok(text) = String::from_utf8(text) else {
                continue;
            };
            if !text.starts_with(['[', '{']) {
                continue;
            }
            // serde reads the first value of the text and says where it ends.
            let mut stream = serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>();
            let serde = stream.next();
            let end = stream.byte_offset();
            let beyond = matches!(&serde, Some(Err(e)) if e.to_string().contains("number out of range"));
            match (skip_container(text.as_bytes(), 0, 0), serde) {
                (Some((ours, overflow)), Some(Ok(_))) => {
                    assert_eq!(ours, end, "{text}");
                    assert!(overflow.is_none(), "{text}");
                }
                (Some((_, overflow)), Some(Err(_))) => {
                    assert!(
                        beyond && overflow.is_some(),
                        "accepted what serde refuses: {text}"
                    );
                }
                (None, Some(Ok(_))) => panic!("refused what serde accepts: {text}"),
                (None, _) | (Some(_), None) => {}
            }
        }
    }

    /// A reader's object is taken as read (its text, its keys, the cursor after it) and nothing else
    /// of the line is taken on trust: a length that does not end on a closing brace is ignored, the
    /// rest of the line is validated, and only `params.arguments` objects are offered.
    #[test]
    fn decode_with_takes_what_the_reader_read_and_validates_the_rest() {
        fn arguments_of(line: &str, len: usize) -> Result<Option<ArgumentsText<'_>>, i32> {
            let mut offered = Vec::new();
            let decoded = decode_with(line.as_bytes(), &mut |text: &str| {
                offered.push(text.to_owned());
                Some((len, vec![Cow::Borrowed("read")]))
            });
            for text in &offered {
                assert!(text.starts_with(r#"{"a""#), "offered {text}");
            }
            match decoded {
                Ok(Some(Message::Request { params, .. })) => Ok(params.arguments.and_then(Result::ok)),
                Ok(_) => Ok(None),
                Err(refusal) => Err(refusal.code),
            }
        }
        let line = |tail: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"x":{{"a":0}},"arguments":{{"a":[1,2]}}{tail}}}}}"#
            )
        };
        let plain = line("");
        let read = arguments_of(&plain, 11).unwrap().unwrap();
        assert_eq!(
            (read.text, read.keys),
            (r#"{"a":[1,2]}"#, vec![Cow::Borrowed("read")])
        );
        // Lengths that end elsewhere than on a closing brace: the object is validated and read as usual.
        for len in [0, 1, 5, 10, 10_000] {
            let usual = arguments_of(&plain, len).unwrap().unwrap();
            assert_eq!(
                (usual.text, usual.keys),
                (r#"{"a":[1,2]}"#, vec![Cow::Borrowed("a")]),
                "{len}"
            );
        }
        // What follows the object read is validated.
        assert_eq!(arguments_of(&line(r#","y":[1,]"#), 11).err(), Some(PARSE_ERROR));
        assert_eq!(arguments_of(&line(r#","y":"\x""#), 11).err(), Some(PARSE_ERROR));
        assert!(arguments_of(&line(r#","y":[1]"#), 11).unwrap().is_some());
    }
}
