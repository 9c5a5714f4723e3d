//! A message's `content` in every shape providers send: a string, `null`,
//! absent, or an array of OpenAI content parts / Anthropic content blocks
//! (kept verbatim), with the token estimate of each part. No I/O.
//!
//! Counting a part:
//! - text (`text`, `refusal`, Anthropic `text` and `thinking`): its text;
//! - images (`image_url`, Anthropic `image`): OpenAI's tile formula for the
//!   model (low detail: the base cost; high/auto: fit in 2048x2048, shortest
//!   side down to 768, then base + per-tile cost per 512 px tile). The size
//!   is read from the header of inline (base64) PNG, GIF, JPEG and WebP
//!   data; an image whose size is unknown (a URL) costs the most a
//!   high-detail image can (2048x768: 8 tiles), so the estimate never
//!   falls short;
//! - audio (`input_audio`): about 10 tokens per second, the duration
//!   taken from the decoded size at 32 kB/s for WAV and 16 kB/s for any
//!   other format;
//! - files and documents with inline data: one token per 4 decoded bytes;
//!   a file known only by id, and any other part, costs the tokens of its
//!   JSON text;
//! - Anthropic `tool_use`: its name and its input as JSON;
//!   `tool_result`: its `tool_use_id` and its content (a string or
//!   blocks, counted as above); `redacted_thinking`: one token per 4 bytes
//!   of its data.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;

/// The `content` of a message.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Content {
    /// No `content` field at all; written back without one.
    #[default]
    Absent,
    /// `"content": null` (an assistant message that only calls tools).
    Null,
    /// A plain string.
    Text(String),
    /// An array of content parts or blocks, kept as they came.
    Parts(Vec<Json>),
}

impl Content {
    /// True for a message read without a `content` field.
    pub fn is_absent(&self) -> bool {
        matches!(self, Content::Absent)
    }

    /// The string content, if the content is a plain string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Content::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The text a reader sees: the string, or the text of the text parts
    /// (OpenAI `text` and `refusal`, Anthropic `text`) joined by newlines.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Content::Text(s) => Cow::Borrowed(s),
            Content::Absent | Content::Null => Cow::Borrowed(""),
            Content::Parts(parts) => {
                let texts: Vec<&str> = parts.iter().filter_map(part_text).collect();
                match texts.as_slice() {
                    [] => Cow::Borrowed(""),
                    [one] => Cow::Borrowed(one),
                    _ => Cow::Owned(texts.join("\n")),
                }
            }
        }
    }

    /// The parts, for array content.
    pub fn parts(&self) -> &[Json] {
        match self {
            Content::Parts(p) => p,
            _ => &[],
        }
    }

    /// Anthropic `tool_use` blocks.
    pub fn tool_uses(&self) -> impl Iterator<Item = &Json> {
        self.parts()
            .iter()
            .filter(|p| part_type(p) == Some("tool_use"))
    }

    /// Each Anthropic `tool_result` block as (`tool_use_id`, its text:
    /// the string content or the text of its text blocks).
    pub fn tool_results(&self) -> impl Iterator<Item = (&str, String)> {
        self.parts()
            .iter()
            .filter(|p| part_type(p) == Some("tool_result"))
            .map(|p| {
                let id = p.get("tool_use_id").and_then(Json::as_str).unwrap_or("");
                let text = match p.get("content") {
                    Some(Json::String(s)) => s.clone(),
                    Some(Json::Array(parts)) => parts
                        .iter()
                        .filter_map(part_text)
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                (id, text)
            })
    }

    /// Each Anthropic `tool_result` block as its `tool_use_id`, its text
    /// and whether the block says `is_error: true`.
    pub fn tool_result_entries(&self) -> impl Iterator<Item = (&str, String, bool)> {
        self.tool_results()
            .zip(
                self.parts()
                    .iter()
                    .filter(|p| part_type(p) == Some("tool_result")),
            )
            .map(|((id, text), block)| {
                let is_error = block.get("is_error") == Some(&Json::Bool(true));
                (id, text, is_error)
            })
    }

    /// The `tool_use_id` of each Anthropic `tool_result` block.
    pub fn tool_result_ids(&self) -> impl Iterator<Item = &str> {
        self.parts()
            .iter()
            .filter(|p| part_type(p) == Some("tool_result"))
            .filter_map(|p| p.get("tool_use_id").and_then(Json::as_str))
    }
}

impl From<String> for Content {
    fn from(s: String) -> Self {
        Content::Text(s)
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Self {
        Content::Text(s.to_string())
    }
}

impl From<Option<String>> for Content {
    fn from(s: Option<String>) -> Self {
        s.map_or(Content::Null, Content::Text)
    }
}

impl fmt::Display for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Absent | Content::Null => s.serialize_none(),
            Content::Text(t) => s.serialize_str(t),
            Content::Parts(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Json::deserialize(d)? {
            Json::Null => Ok(Content::Null),
            Json::String(s) => Ok(Content::Text(s)),
            Json::Array(parts) => Ok(Content::Parts(parts)),
            _ => Err(serde::de::Error::custom(
                "field `content`: expected a string, an array of content parts or null",
            )),
        }
    }
}

/// Check the parts of array content: each an object with a string `type`.
/// The error names the part.
pub(crate) fn check_parts(parts: &[Json]) -> Result<(), String> {
    for (n, part) in parts.iter().enumerate() {
        if part_type(part).is_none() {
            return Err(format!(
                "field `content[{n}]`: expected an object with a string `type` (a content part or block)"
            ));
        }
    }
    Ok(())
}

fn part_type(part: &Json) -> Option<&str> {
    part.get("type").and_then(Json::as_str)
}

fn part_text(part: &Json) -> Option<&str> {
    let key = match part_type(part)? {
        "text" => "text",
        "refusal" => "refusal",
        _ => return None,
    };
    part.get(key).and_then(Json::as_str)
}

/// The image costs of one model family: (base tokens, tokens per tile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageRates {
    pub base: usize,
    pub tile: usize,
}

impl ImageRates {
    /// OpenAI's published rates for `model`: gpt-4o-mini 2833 + 5667 per
    /// tile, o1/o3 75 + 150, every other model 85 + 170 (gpt-4o's).
    pub fn for_model(model: &str) -> ImageRates {
        let lower = model.to_ascii_lowercase();
        let name = lower.rsplit([':', '/']).next().unwrap_or(&lower);
        if name.starts_with("gpt-4o-mini") {
            ImageRates {
                base: 2833,
                tile: 5667,
            }
        } else if name.starts_with("o1") || name.starts_with("o3") {
            ImageRates {
                base: 75,
                tile: 150,
            }
        } else {
            ImageRates {
                base: 85,
                tile: 170,
            }
        }
    }

    /// Tokens of one image: `low` detail costs the base; otherwise the
    /// tile formula on `size`, or on the largest size (8 tiles) when the
    /// size is unknown.
    pub fn image(self, low: bool, size: Option<(u32, u32)>) -> usize {
        if low {
            return self.base;
        }
        let (w, h) = size.unwrap_or((2048, 768));
        let (mut w, mut h) = (f64::from(w.max(1)), f64::from(h.max(1)));
        if w.max(h) > 2048.0 {
            let s = 2048.0 / w.max(h);
            w *= s;
            h *= s;
        }
        if w.min(h) > 768.0 {
            let s = 768.0 / w.min(h);
            w *= s;
            h *= s;
        }
        let tiles = (w / 512.0).ceil() as usize * (h / 512.0).ceil() as usize;
        self.base + self.tile * tiles
    }
}

/// Tokens of array content, with `text` counting a string.
pub(crate) fn count_parts(
    parts: &[Json],
    rates: ImageRates,
    text: &dyn Fn(&str) -> usize,
) -> usize {
    parts.iter().map(|p| count_part(p, rates, text)).sum()
}

fn count_part(part: &Json, rates: ImageRates, text: &dyn Fn(&str) -> usize) -> usize {
    let str_at = |key: &str| part.get(key).and_then(Json::as_str);
    match part_type(part).unwrap_or("") {
        "text" => text(str_at("text").unwrap_or("")),
        "refusal" => text(str_at("refusal").unwrap_or("")),
        "thinking" => text(str_at("thinking").unwrap_or("")),
        "redacted_thinking" => str_at("data").unwrap_or("").len().div_ceil(4),
        "image_url" => {
            let image = part.get("image_url");
            let url = image.and_then(|i| i.get("url")).and_then(Json::as_str);
            let low = image.and_then(|i| i.get("detail")).and_then(Json::as_str) == Some("low");
            let size = url.and_then(data_url_payload).and_then(|b| image_size(&b));
            rates.image(low, size)
        }
        "image" => {
            let source = part.get("source");
            let data = source
                .filter(|s| s.get("type").and_then(Json::as_str) == Some("base64"))
                .and_then(|s| s.get("data"))
                .and_then(Json::as_str);
            let size = data
                .and_then(|d| decode_base64_prefix(d, IMAGE_HEADER_BYTES))
                .and_then(|b| image_size(&b));
            rates.image(false, size)
        }
        "input_audio" => {
            let audio = part.get("input_audio");
            let data = audio
                .and_then(|a| a.get("data"))
                .and_then(Json::as_str)
                .unwrap_or("");
            let wav = audio.and_then(|a| a.get("format")).and_then(Json::as_str) == Some("wav");
            let bytes = decoded_len(data);
            let per_second = if wav { 32_000 } else { 16_000 };
            (bytes * 10).div_ceil(per_second).max(1)
        }
        "file" => {
            let data = part
                .get("file")
                .and_then(|f| f.get("file_data"))
                .and_then(Json::as_str);
            match data {
                Some(d) => decoded_len(d.rsplit(',').next().unwrap_or(d)).div_ceil(4),
                None => text(&part.to_string()),
            }
        }
        "document" => {
            let source = part.get("source");
            match source.and_then(|s| s.get("data")).and_then(Json::as_str) {
                Some(d)
                    if source.and_then(|s| s.get("type")).and_then(Json::as_str)
                        == Some("base64") =>
                {
                    decoded_len(d).div_ceil(4)
                }
                Some(d) => text(d),
                None => text(&part.to_string()),
            }
        }
        "tool_use" => {
            let input = part.get("input").map(Json::to_string).unwrap_or_default();
            text(str_at("name").unwrap_or("")) + text(&input)
        }
        "tool_result" => {
            let id = text(str_at("tool_use_id").unwrap_or(""));
            id + match part.get("content") {
                Some(Json::String(s)) => text(s),
                Some(Json::Array(parts)) => count_parts(parts, rates, text),
                Some(Json::Null) | None => 0,
                Some(other) => text(&other.to_string()),
            }
        }
        _ => text(&part.to_string()),
    }
}

/// Bytes of base64 decoded to find an image's size (enough for the
/// headers of PNG, GIF and WebP and for most JPEGs' frame header).
const IMAGE_HEADER_BYTES: usize = 64 * 1024;

/// The decoded head of a `data:` URL's base64 payload.
fn data_url_payload(url: &str) -> Option<Vec<u8>> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    if !meta.ends_with(";base64") {
        return None;
    }
    decode_base64_prefix(data, IMAGE_HEADER_BYTES)
}

/// Decoded size of base64 text (padding and whitespace ignored).
fn decoded_len(data: &str) -> usize {
    let n = data
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_'))
        .count();
    n * 3 / 4
}

/// Decode at most `limit` bytes of standard or URL-safe base64; `None`
/// on a character outside the alphabet.
fn decode_base64_prefix(data: &str, limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(limit.min(data.len()));
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in data.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
            if out.len() >= limit {
                break;
            }
        }
    }
    Some(out)
}

/// Width and height from a PNG, GIF, WebP or JPEG header.
pub(crate) fn image_size(b: &[u8]) -> Option<(u32, u32)> {
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let be16 = |i: usize| {
        Some(u32::from(u16::from_be_bytes(
            b.get(i..i + 2)?.try_into().ok()?,
        )))
    };
    let le16 = |i: usize| {
        Some(u32::from(u16::from_le_bytes(
            b.get(i..i + 2)?.try_into().ok()?,
        )))
    };
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        return Some((le16(6)?, le16(8)?));
    }
    if b.len() >= 30 && &b[0..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        let le24 = |i: usize| {
            Some(u32::from(b[i]) | u32::from(b[i + 1]) << 8 | u32::from(*b.get(i + 2)?) << 16)
        };
        return match &b[12..16] {
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let v = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                Some(((v & 0x3fff) + 1, ((v >> 14) & 0x3fff) + 1))
            }
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            _ => None,
        };
    }
    if b.starts_with(&[0xff, 0xd8]) {
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xff {
                return None;
            }
            let marker = b[i + 1];
            let len = be16(i + 2)? as usize;
            // Start-of-frame markers (not DHT, JPG or DAC).
            if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + len;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_formula_matches_openai_examples() {
        let r = ImageRates::for_model("gpt-4o");
        // OpenAI's worked examples: 1024x1024 high = 765, 2048x4096 = 1105,
        // any image at low detail = 85.
        assert_eq!(r.image(false, Some((1024, 1024))), 765);
        assert_eq!(r.image(false, Some((2048, 4096))), 1105);
        assert_eq!(r.image(true, Some((4096, 4096))), 85);
        assert_eq!(r.image(false, None), 85 + 170 * 8);
        assert_eq!(ImageRates::for_model("openai:gpt-4o-mini").base, 2833);
    }

    #[test]
    fn sizes_from_headers() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(640u32.to_be_bytes());
        png.extend(480u32.to_be_bytes());
        assert_eq!(image_size(&png), Some((640, 480)));
        let gif = b"GIF89a\x20\x03\x58\x02";
        assert_eq!(image_size(gif), Some((800, 600)));
        let jpeg = [
            0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 11, 8, 0x01, 0xe0, 0x02, 0x80, 3, 0,
            0, 0,
        ];
        assert_eq!(image_size(&jpeg), Some((640, 480)));
        assert_eq!(decode_base64_prefix("aGk=", 10).unwrap(), b"hi");
    }
}
