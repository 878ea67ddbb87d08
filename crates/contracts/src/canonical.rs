//! Canonical JSON, the payload fingerprint, and the inspect cursor.
//!
//! ```
//! use serde_json::json;
//! assert_eq!(shiftwork_contracts::canonical::to_string(&json!({"b": 1, "a": [true, {"d": 1, "c": null}]})),
//!            r#"{"a":[true,{"c":null,"d":1}],"b":1}"#);
//! ```

use serde_json::Value;

/// Canonical JSON: object keys sorted by byte order at every depth, no insignificant whitespace,
/// strings and numbers as `serde_json` writes them.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                write(&map[*k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// SHA-256 hex of the canonical JSON of `value`.
pub fn sha256_hex(value: &Value) -> String {
    shiftwork_seams::hash::hex(&shiftwork_seams::hash::sha256(to_string(value).as_bytes()))
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url.
pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=n {
            out.push(char::from(B64[((v >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Decodes unpadded base64url; `None` on any other character or an impossible length.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut vals = Vec::with_capacity(text.len());
    for c in text.bytes() {
        vals.push(B64.iter().position(|&x| x == c)? as u32);
    }
    if vals.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::new();
    for chunk in vals.chunks(4) {
        let mut v = 0u32;
        for (i, x) in chunk.iter().enumerate() {
            v |= x << (18 - 6 * i);
        }
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    // Reject non-canonical encodings (stray low bits), so a cursor has exactly one spelling.
    (base64url(&out) == text).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips() {
        for len in 0..20 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let text = base64url(&bytes);
            assert!(!text.contains('='));
            assert_eq!(base64url_decode(&text).unwrap(), bytes);
        }
        assert_eq!(base64url(b"v1.5.abc"), "djEuNS5hYmM");
        assert!(base64url_decode("a").is_none());
        assert!(base64url_decode("a+b/").is_none());
    }
}
