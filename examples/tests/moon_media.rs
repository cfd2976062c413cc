//! The `moon` and `media` examples over real stdio: the MCP Apps view of `moon` (tool `_meta`,
//! the `ui://` resource, its HTML), its structured results and errors; every block shape of
//! `media`, decoded down to the bytes (PNG chunks and checksums, the WAV header), the resource
//! a link points to, structured content alone, and the tools defined at run time.

mod common;

use std::collections::BTreeSet;

use base64::Engine as _;
use common::{Proc, VERSION, error_text, is_error, names_field, obj, run, text};
use serde_json::{Value, json};

/// The `moon` example server.
const MOON: &str = env!("CARGO_BIN_EXE_moon");

/// The `media` example server.
const MEDIA: &str = env!("CARGO_BIN_EXE_media");

/// The view `show_moon` links to, as the crate embeds it.
const MOON_HTML: &str = include_str!("../ui/moon.html");

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {tools:?}"))
}

fn names(tools: &[Value]) -> BTreeSet<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().expect("a tool has a name").to_owned())
        .collect()
}

fn decode(data: &Value) -> Vec<u8> {
    let text = data
        .as_str()
        .unwrap_or_else(|| panic!("base64 data is a string: {data}"));
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_else(|e| panic!("not standard base64 ({e}): {text}"))
}

/// The sorted keys of an object.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = obj(v).keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

/// The blocks of a successful result.
fn blocks(result: &Value) -> &Vec<Value> {
    assert!(!is_error(result), "expected success: {result}");
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("`content` is an array: {result}"))
}

/// Today's date in UTC, as YYYY-MM-DD.
fn today_utc() -> String {
    let (year, month, day) = mcp_tool_examples::civil_from_days(mcp_tool_examples::days_today());
    format!("{year:04}-{month:02}-{day:02}")
}

// ---------------------------------------------------------------------------------------------
// moon

#[test]
fn show_moon_links_its_view_and_says_what_it_does() {
    let mut p = Proc::initialized(MOON);
    let tools = p.tools();
    assert_eq!(
        names(&tools),
        BTreeSet::from(["moon_facts".to_owned(), "show_moon".to_owned()])
    );
    let show = tool(&tools, "show_moon");
    assert_eq!(show["title"], "Show moon phase");
    assert_eq!(show["annotations"]["readOnlyHint"], true);
    let meta = &show["_meta"];
    assert_eq!(meta["ui"]["resourceUri"], "ui://moon/moon", "{show}");
    assert_eq!(meta["openai/outputTemplate"], "ui://moon/moon", "{show}");
    assert_eq!(meta["openai/toolInvocation/invoking"], "Looking up");
    assert_eq!(meta["openai/toolInvocation/invoked"], "Here's the moon");
    assert_eq!(meta["openai/widgetAccessible"], true);
    assert_eq!(meta["examples"]["request"], json!({ "date": "2024-04-08" }));
    assert_eq!(meta["examples"]["response"]["phase"], "New Moon");

    // `date` is optional and described; the output is an object with every field required.
    let input = &show["inputSchema"];
    assert_eq!(input["type"], "object");
    assert!(input.get("required").is_none(), "{input}");
    assert!(
        input["properties"]["date"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("YYYY-MM-DD")),
        "{input}"
    );
    let output = &show["outputSchema"];
    assert_eq!(output["type"], "object", "{output}");
    let required: BTreeSet<&str> = output["required"]
        .as_array()
        .expect("required fields")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        required,
        BTreeSet::from(["ageDays", "date", "emoji", "illumination", "phase"])
    );
    assert_eq!(output["properties"]["illumination"]["type"], "number");

    // The text-only tool has no view, no output schema and no `_meta`.
    let facts = tool(&tools, "moon_facts");
    assert!(facts.get("_meta").is_none(), "{facts}");
    assert!(facts.get("outputSchema").is_none(), "{facts}");
}

#[test]
fn the_moon_view_is_listed_and_readable() {
    let mut p = Proc::spawn(MOON);
    let init = p.result(
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "integration-tests", "version": "0.0.0" }
        }),
    );
    assert!(
        init["capabilities"]["resources"].is_object(),
        "a server with a view offers resources: {init}"
    );
    assert_eq!(
        init["capabilities"]["extensions"],
        json!({ "io.modelcontextprotocol/ui": {} }),
        "a server with a view declares MCP Apps: {init}"
    );
    p.notify("notifications/initialized", Value::Null);

    let list = p.result("resources/list", json!({}));
    let resources = list["resources"].as_array().expect("resources");
    let view = resources
        .iter()
        .find(|r| r["uri"] == "ui://moon/moon")
        .unwrap_or_else(|| panic!("the view is listed: {list}"));
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(view["name"], "moon");
    // No domain at all: the view loads and reaches nothing; the host frames it.
    let ui = json!({
        "csp": { "connectDomains": [], "resourceDomains": [] },
        "prefersBorder": true
    });
    assert_eq!(view["_meta"]["ui"], ui, "{view}");

    let read = p.result("resources/read", json!({ "uri": "ui://moon/moon" }));
    let contents = read["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 1, "{read}");
    let c = &contents[0];
    assert_eq!(c["uri"], "ui://moon/moon");
    assert_eq!(c["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(c["_meta"]["ui"], ui, "{c}");
    let html = c["text"].as_str().expect("the view is text");
    assert_eq!(html, MOON_HTML, "the HTML is served as the crate has it");

    // One self-contained HTML5 page: its sources with the ext-apps App class bundled in one
    // inline script (apps/build-views.mjs; the browser test runs the view in Chromium).
    assert!(html.starts_with("<!DOCTYPE html>"), "HTML5 doctype");
    assert!(html.trim_end().ends_with("</html>"));
    for needle in [
        "<meta charset=\"utf-8\">",
        "<title>",
        "Generated by apps/build-views.mjs",
        "@modelcontextprotocol/ext-apps",
        "ui/initialize",
        "ui/notifications/initialized",
        "ui/notifications/tool-result",
        "structuredContent",
        "ageDays",
        "moon_refresh",
    ] {
        assert!(html.contains(needle), "the view has {needle:?}");
    }
    assert_eq!(html.matches("<script").count(), 1, "one inline script");
    let markup = html.split("<script>").next().unwrap_or_default();
    for outside in ["http://", "https://", "src=", "href=", "@import", "url("] {
        assert!(
            !markup.contains(outside),
            "the markup loads nothing: {outside:?}"
        );
    }
    for call in [
        "fetch(",
        "new XMLHttpRequest",
        "new WebSocket",
        "new EventSource",
        "importScripts(",
        "import(",
    ] {
        assert!(!html.contains(call), "the script reaches nothing: {call:?}");
    }
    for tag in [
        "html", "head", "body", "main", "style", "script", "dl", "svg",
    ] {
        let opened = html.matches(&format!("<{tag}")).count();
        let closed = html.matches(&format!("</{tag}>")).count();
        assert_eq!(opened, closed, "<{tag}> is closed");
    }

    let missing = p.rpc_error("resources/read", json!({ "uri": "ui://moon/sun" }));
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("ui://moon/sun")),
        "{missing}"
    );
}

#[test]
fn show_moon_names_the_phase_of_known_dates() {
    let mut p = Proc::initialized(MOON);
    // 2024-04-08: the new moon of the total solar eclipse.
    let result = p.call("show_moon", json!({ "date": "2024-04-08" }));
    let moon = &result["structuredContent"];
    assert_eq!(moon["date"], "2024-04-08");
    assert_eq!(moon["phase"], "New Moon", "{result}");
    assert_eq!(moon["emoji"], "🌑");
    let lit = moon["illumination"].as_f64().expect("a number");
    assert!((0.0..2.0).contains(&lit), "{moon}");
    let age = moon["ageDays"].as_f64().expect("a number");
    assert!(
        !(1.9..=27.7).contains(&age),
        "a new moon is young or old: {moon}"
    );
    // The text copy is the same JSON, for clients that read only `content`.
    let copy: Value = serde_json::from_str(&text(&result)).expect("the text copy is JSON");
    assert_eq!(&copy, moon);

    // The published example is what the tool really answers.
    let tools = p.tools();
    let examples = &tool(&tools, "show_moon")["_meta"]["examples"];
    let answer = p.call("show_moon", examples["request"].clone());
    assert_eq!(answer["structuredContent"], examples["response"]);

    for (date, phase, emoji) in [
        ("2024-04-15", "First Quarter", "🌓"),
        ("2024-04-23", "Full Moon", "🌕"),
        ("2024-05-01", "Last Quarter", "🌗"),
        ("2024-04-11", "Waxing Crescent", "🌒"),
    ] {
        let result = p.call("show_moon", json!({ "date": date }));
        assert_eq!(
            result["structuredContent"]["phase"], phase,
            "{date}: {result}"
        );
        assert_eq!(result["structuredContent"]["emoji"], emoji, "{date}");
    }
    let full = p.call("show_moon", json!({ "date": "2024-04-23" }));
    assert!(full["structuredContent"]["illumination"].as_f64().unwrap() > 97.0);
}

#[test]
fn show_moon_defaults_to_today() {
    let mut p = Proc::initialized(MOON);
    let before = today_utc();
    let result = p.call("show_moon", json!({}));
    let after = today_utc();
    let date = result["structuredContent"]["date"]
        .as_str()
        .expect("a date");
    assert!(
        date == before || date == after,
        "{date} is today ({before})"
    );
    let age = result["structuredContent"]["ageDays"].as_f64().unwrap();
    assert!((0.0..29.54).contains(&age), "{result}");
    let lit = result["structuredContent"]["illumination"]
        .as_f64()
        .unwrap();
    assert!((0.0..=100.0).contains(&lit), "{result}");
}

#[test]
fn a_bad_date_is_an_error_naming_date_and_its_format() {
    let mut p = Proc::initialized(MOON);
    for bad in [
        "2024-13-01",
        "2023-02-29",
        "04/08/2024",
        "2024-4-8",
        "tomorrow",
        "",
    ] {
        let result = p.call("show_moon", json!({ "date": bad }));
        let t = error_text(&result);
        assert!(names_field(&t, "date"), "{bad:?}: {t}");
        assert!(t.contains("YYYY-MM-DD"), "{bad:?}: {t}");
        assert!(result.get("structuredContent").is_none(), "{result}");
    }
    // The wrong type is caught by the input schema, before the tool runs.
    let result = p.call("show_moon", json!({ "date": 20_240_408 }));
    let t = error_text(&result);
    assert!(names_field(&t, "date"), "{t}");
    let result = p.call("show_moon", json!({ "day": "2024-04-08" }));
    assert!(names_field(&error_text(&result), "day"), "{result}");
}

#[test]
fn moon_facts_answers_in_text_only() {
    let mut p = Proc::initialized(MOON);
    let all = p.call("moon_facts", json!({}));
    let content = blocks(&all);
    assert!(content.iter().all(|b| b["type"] == "text"), "{all}");
    assert!(all.get("structuredContent").is_none(), "{all}");
    let t = text(&all);
    assert!(t.contains("384,400 km"), "{t}");
    assert_eq!(t.lines().count(), 4, "{t}");

    let one = p.call("moon_facts", json!({ "topic": "gravity" }));
    assert_eq!(text(&one).lines().count(), 1);
    assert!(text(&one).contains("one sixth"), "{one}");

    let bad = p.call("moon_facts", json!({ "topic": "cheese" }));
    assert!(names_field(&error_text(&bad), "topic"), "{bad}");
}

#[test]
fn moon_list_shows_both_tools() {
    let out = run(MOON, &["list"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let row = |name: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}: {}", out.stdout))
            .to_owned()
    };
    assert!(
        row("show_moon").contains("Show moon phase"),
        "{}",
        out.stdout
    );
    assert!(row("show_moon").contains("read-only"), "{}", out.stdout);
    assert!(row("moon_facts").contains("Moon facts"), "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!("2 tools on moon {VERSION}")),
        "{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// media: checking the bytes independently of the encoder in the example.

/// CRC-32 (ISO 3309), bit by bit.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0_u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1_u32, 0_u32);
    for &x in bytes {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().expect("4 bytes"))
}

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().expect("4 bytes"))
}

fn le16(b: &[u8]) -> u16 {
    u16::from_le_bytes(b[..2].try_into().expect("2 bytes"))
}

/// A decoded PNG: its size and its RGB pixels, row by row.
#[derive(Debug)]
struct Png {
    width: u32,
    height: u32,
    pixels: Vec<[u8; 3]>,
}

/// Checks a PNG made of stored deflate blocks down to every checksum, and decodes it.
fn decode_png(bytes: &[u8]) -> Png {
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "the PNG signature: {bytes:?}"
    );
    let mut at = 8;
    let mut chunks = Vec::new();
    while at < bytes.len() {
        let len = be32(&bytes[at..]) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        let crc = be32(&bytes[at + 8 + len..]);
        assert_eq!(
            crc,
            crc32(&bytes[at + 4..at + 8 + len]),
            "CRC of chunk {}",
            String::from_utf8_lossy(kind)
        );
        chunks.push((kind.to_vec(), data.to_vec()));
        at += 12 + len;
    }
    assert_eq!(at, bytes.len(), "nothing after the last chunk");
    let kinds: Vec<&[u8]> = chunks.iter().map(|(k, _)| k.as_slice()).collect();
    assert_eq!(kinds, [&b"IHDR"[..], b"IDAT", b"IEND"]);
    let ihdr = &chunks[0].1;
    assert_eq!(ihdr.len(), 13);
    let (width, height) = (be32(ihdr), be32(&ihdr[4..]));
    assert_eq!(&ihdr[8..], [8, 2, 0, 0, 0], "8-bit RGB, no interlace");
    assert!(chunks[2].1.is_empty(), "IEND is empty");

    // zlib: a valid header, stored blocks, the Adler-32 of the data.
    let z = &chunks[1].1;
    assert_eq!(z[0] & 0x0F, 8, "deflate");
    assert_eq!((u16::from(z[0]) * 256 + u16::from(z[1])) % 31, 0, "FCHECK");
    let mut raw = Vec::new();
    let mut at = 2;
    loop {
        let header = z[at];
        assert_eq!(header & 0b110, 0, "a stored block");
        let len = le16(&z[at + 1..]);
        assert_eq!(le16(&z[at + 3..]), !len, "NLEN");
        raw.extend_from_slice(&z[at + 5..at + 5 + usize::from(len)]);
        at += 5 + usize::from(len);
        if header & 1 == 1 {
            break;
        }
    }
    assert_eq!(be32(&z[at..]), adler32(&raw), "Adler-32");
    assert_eq!(at + 4, z.len(), "nothing after the checksum");

    let stride = 1 + 3 * width as usize;
    assert_eq!(raw.len(), stride * height as usize);
    let mut pixels = Vec::new();
    for row in raw.chunks(stride) {
        assert_eq!(row[0], 0, "filter type none");
        pixels.extend(row[1..].chunks(3).map(|p| [p[0], p[1], p[2]]));
    }
    Png {
        width,
        height,
        pixels,
    }
}

#[test]
fn an_image_block_is_a_valid_png() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("swatch", json!({ "color": "#FF8800", "size": 3 }));
    let content = blocks(&result);
    assert_eq!(content.len(), 1, "{result}");
    let block = &content[0];
    assert_eq!(keys(block), ["data", "mimeType", "type"], "{block}");
    assert_eq!(block["type"], "image");
    assert_eq!(block["mimeType"], "image/png");
    let png = decode_png(&decode(&block["data"]));
    assert_eq!((png.width, png.height), (3, 3));
    assert!(
        png.pixels.iter().all(|p| *p == [0xFF, 0x88, 0x00]),
        "{png:?}"
    );

    // The default size, and a bad call naming each broken field.
    let result = p.call("swatch", json!({ "color": "#000000" }));
    let png = decode_png(&decode(&blocks(&result)[0]["data"]));
    assert_eq!((png.width, png.height), (16, 16));
    let bad = p.call("swatch", json!({ "color": "orange", "size": 65 }));
    let t = error_text(&bad);
    assert!(names_field(&t, "color"), "{t}");
    assert!(names_field(&t, "size"), "{t}");
}

#[test]
fn an_audio_block_is_a_valid_wav() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("tone", json!({ "frequency": 440, "durationMs": 100 }));
    let content = blocks(&result);
    assert_eq!(content.len(), 1, "{result}");
    let block = &content[0];
    assert_eq!(keys(block), ["data", "mimeType", "type"], "{block}");
    assert_eq!(block["type"], "audio");
    assert_eq!(block["mimeType"], "audio/wav");
    let wav = decode(&block["data"]);
    assert_eq!(&wav[..4], b"RIFF");
    assert_eq!(le32(&wav[4..]) as usize, wav.len() - 8, "the RIFF size");
    assert_eq!(&wav[8..12], b"WAVE");
    assert_eq!(&wav[12..16], b"fmt ");
    assert_eq!(le32(&wav[16..]), 16);
    assert_eq!(le16(&wav[20..]), 1, "PCM");
    assert_eq!(le16(&wav[22..]), 1, "mono");
    let rate = le32(&wav[24..]);
    assert_eq!(rate, 8_000);
    assert_eq!(le32(&wav[28..]), rate * 2, "bytes per second");
    assert_eq!(le16(&wav[32..]), 2, "bytes per frame");
    assert_eq!(le16(&wav[34..]), 16, "bits per sample");
    assert_eq!(&wav[36..40], b"data");
    let data_len = le32(&wav[40..]) as usize;
    assert_eq!(data_len, 800 * 2, "100 ms at 8 kHz");
    assert_eq!(wav.len(), 44 + data_len);

    // A sine at 440 Hz crosses zero about 2 × 440 × 0.1 = 88 times in 100 ms.
    let samples: Vec<i16> = wav[44..]
        .chunks(2)
        .map(|s| i16::from_le_bytes([s[0], s[1]]))
        .collect();
    let crossings = samples
        .windows(2)
        .filter(|w| (w[0] < 0) != (w[1] < 0))
        .count();
    assert!((84..=92).contains(&crossings), "{crossings} zero crossings");
    assert!(samples.iter().any(|s| s.unsigned_abs() > 10_000), "audible");

    for (args, field) in [
        (json!({ "frequency": 5 }), "frequency"),
        (json!({ "durationMs": 60_000 }), "durationMs"),
        (json!({ "volume": 11 }), "volume"),
    ] {
        let bad = p.call("tone", args.clone());
        assert!(names_field(&error_text(&bad), field), "{args}: {bad}");
    }
}

#[test]
fn a_resource_link_points_to_a_readable_resource() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("latest_report", json!({}));
    let content = blocks(&result);
    assert_eq!(content.len(), 1, "{result}");
    let link = &content[0];
    let uri = "media://reports/latest.md";
    assert_eq!(
        link,
        &json!({
            "type": "resource_link",
            "uri": uri,
            "name": "latest.md",
            "title": "Latest media report",
            "description": "What the media server produced most recently",
            "mimeType": "text/markdown",
            "size": link["size"].clone(),
        })
    );

    let list = p.result("resources/list", json!({}));
    let listed = list["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["uri"] == uri)
        .unwrap_or_else(|| panic!("the linked resource is listed: {list}"));
    assert_eq!(listed["mimeType"], "text/markdown");
    assert_eq!(listed["title"], "Latest media report");

    let read = p.result("resources/read", json!({ "uri": uri }));
    let contents = read["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 1, "{read}");
    assert_eq!(contents[0]["uri"], uri);
    assert_eq!(contents[0]["mimeType"], "text/markdown");
    let body = contents[0]["text"].as_str().expect("text");
    assert!(body.starts_with("# Media report"), "{body}");
    assert_eq!(
        Some(body.len() as u64),
        link["size"].as_u64(),
        "the link's size"
    );
}

#[test]
fn embedded_resources_carry_text_and_blobs() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("embedded_files", json!({}));
    let content = blocks(&result);
    assert_eq!(content.len(), 2, "{result}");
    assert_eq!(
        content[0],
        json!({
            "type": "resource",
            "resource": {
                "uri": "media://embedded/hello.txt",
                "mimeType": "text/plain",
                "text": "Hello from an embedded resource."
            }
        })
    );
    let blob = &content[1];
    assert_eq!(keys(blob), ["resource", "type"]);
    assert_eq!(blob["type"], "resource");
    assert_eq!(keys(&blob["resource"]), ["blob", "mimeType", "uri"]);
    assert_eq!(blob["resource"]["uri"], "media://embedded/dot.png");
    assert_eq!(blob["resource"]["mimeType"], "image/png");
    let png = decode_png(&decode(&blob["resource"]["blob"]));
    assert_eq!((png.width, png.height), (1, 1));
    assert_eq!(png.pixels, [[0xFF, 0, 0]]);
}

#[test]
fn annotations_carry_audience_and_priority() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("briefing", json!({}));
    assert_eq!(
        blocks(&result),
        &vec![
            json!({
                "type": "text",
                "text": "Your media is ready.",
                "annotations": { "audience": ["user"], "priority": 1.0 }
            }),
            json!({
                "type": "text",
                "text": "Internal: 3 blocks rendered, none failed.",
                "annotations": {
                    "audience": ["assistant"],
                    "priority": 0.25,
                    "lastModified": "2025-01-15T10:30:00Z"
                }
            }),
        ]
    );
}

/// The custom block of the example, as it must be on the wire.
fn video_block() -> Value {
    json!({
        "type": "video",
        "data": "AAAAGGZ0eXBpc29tAAACAGlzb21tcDQx",
        "mimeType": "video/mp4",
        "durationMs": 1500
    })
}

#[test]
fn a_custom_block_type_goes_out_as_it_says() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("clip", json!({}));
    assert_eq!(blocks(&result), &vec![video_block()]);
    let bytes = decode(&blocks(&result)[0]["data"]);
    assert_eq!(&bytes[4..8], b"ftyp", "an MP4 box");
}

#[test]
fn several_blocks_keep_their_order_and_types() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("gallery", json!({ "color": "#102030", "size": 2 }));
    let content = blocks(&result);
    let types: Vec<&str> = content.iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(types, ["text", "image", "audio"], "{result}");
    assert_eq!(
        content[0]["text"],
        "A 2px swatch of #102030 and an A440 tone"
    );
    let png = decode_png(&decode(&content[1]["data"]));
    assert_eq!(png.pixels, vec![[0x10, 0x20, 0x30]; 4]);
    assert_eq!(&decode(&content[2]["data"])[8..12], b"WAVE");
    assert!(result.get("structuredContent").is_none());
}

#[test]
fn a_full_result_has_content_structure_and_meta() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("detect_scenes", json!({}));
    assert_eq!(
        result,
        json!({
            "content": [{ "type": "text", "text": "Detected 3 scenes" }, video_block()],
            "structuredContent": { "scenes": 3, "confidence": 0.92 },
            "_meta": {
                "dev.mcp-tool.examples/detector": { "name": "scene-counter", "version": 1 }
            }
        })
    );
    // The output schema is the attribute's, verbatim.
    let tools = p.tools();
    assert_eq!(
        tool(&tools, "detect_scenes")["outputSchema"],
        json!({
            "type": "object",
            "properties": {
                "scenes": { "type": "integer", "minimum": 0 },
                "confidence": { "type": "number", "minimum": 0, "maximum": 1 }
            },
            "required": ["scenes", "confidence"]
        })
    );
}

#[test]
fn structured_content_alone_gets_its_text_copy() {
    let mut p = Proc::initialized(MEDIA);
    let result = p.call("palette", json!({ "color": "#3366cc" }));
    let structured = &result["structuredContent"];
    assert_eq!(
        structured,
        &json!({
            "base": "#3366cc",
            "complement": "#cc9933",
            "lighter": "#99b2e5",
            "darker": "#193366"
        })
    );
    let content = blocks(&result);
    assert_eq!(content.len(), 1, "one text copy: {result}");
    assert_eq!(keys(&content[0]), ["text", "type"]);
    assert_eq!(content[0]["type"], "text");
    let copy: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&copy, structured, "the text copy is the structured JSON");

    // A `ToolResult` declares no output schema; an error has no structured content.
    let tools = p.tools();
    assert!(tool(&tools, "palette").get("outputSchema").is_none());
    let bad = p.call("palette", json!({ "color": "blue" }));
    assert!(names_field(&error_text(&bad), "color"), "{bad}");
    assert!(bad.get("structuredContent").is_none(), "{bad}");
}

#[test]
fn dynamic_tools_are_listed_with_their_schemas() {
    let mut p = Proc::initialized(MEDIA);
    let tools = p.tools();
    let hints = json!({ "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false });

    let mix = tool(&tools, "mix_colors");
    assert_eq!(mix["title"], "Mix colours");
    let mut expected = hints.clone();
    expected["title"] = json!("Mix colours");
    assert_eq!(mix["annotations"], expected);
    assert_eq!(
        mix["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "colors": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "The colours to mix, each as #RRGGBB"
                },
                "weights": {
                    "type": "array",
                    "items": { "type": "number" },
                    "description": "One weight per colour (default: equal weights)"
                },
                "as_rgb": {
                    "type": "boolean",
                    "description": "Answer as rgb(r, g, b) instead of hex"
                }
            },
            "required": ["colors"]
        })
    );
    assert!(mix.get("outputSchema").is_none(), "{mix}");

    let sum = tool(&tools, "checksum");
    assert_eq!(sum["inputSchema"]["required"], json!(["text"]));
    assert_eq!(sum["inputSchema"]["additionalProperties"], false);
    assert_eq!(
        sum["inputSchema"]["properties"]["algorithm"]["enum"],
        json!(["crc32", "adler32"])
    );
    assert_eq!(
        sum["outputSchema"]["required"],
        json!(["algorithm", "value", "hex"])
    );
}

#[test]
fn dynamic_tools_are_called_and_validated() {
    let mut p = Proc::initialized(MEDIA);
    let mixed = p.call(
        "mix_colors",
        json!({ "colors": ["#ff0000", "#0000ff"], "weights": [1, 3] }),
    );
    assert_eq!(text(&mixed), "#4000bf", "{mixed}");
    let mixed = p.call(
        "mix_colors",
        json!({ "colors": ["#ffffff", "#000000"], "as_rgb": true }),
    );
    assert_eq!(text(&mixed), "rgb(128, 128, 128)", "{mixed}");

    // The schema's rules, each naming its field.
    for (args, field) in [
        (json!({}), "colors"),
        (json!({ "colors": "#ff0000" }), "colors"),
        (json!({ "colors": [1, 2] }), "colors[0]"),
        (
            json!({ "colors": ["#ff0000"], "weights": ["heavy"] }),
            "weights[0]",
        ),
        (json!({ "colors": ["#ff0000"], "as_rgb": "yes" }), "as_rgb"),
    ] {
        let bad = p.call("mix_colors", args.clone());
        let t = error_text(&bad);
        assert!(names_field(&t, field), "{args}: {t}");
    }
    // The handler's own checks.
    let bad = p.call("mix_colors", json!({ "colors": ["#ff0000", "red"] }));
    assert!(error_text(&bad).contains("colors[1]"), "{bad}");

    // Standard check values: CRC-32 and Adler-32 of "123456789".
    let sum = p.call("checksum", json!({ "text": "123456789" }));
    assert_eq!(
        sum["structuredContent"],
        json!({ "algorithm": "crc32", "value": 0xCBF4_3926_u32, "hex": "cbf43926" })
    );
    let copy: Value = serde_json::from_str(&text(&sum)).unwrap();
    assert_eq!(copy, sum["structuredContent"]);
    let sum = p.call(
        "checksum",
        json!({ "text": "123456789", "algorithm": "adler32" }),
    );
    assert_eq!(sum["structuredContent"]["hex"], "091e01de", "{sum}");
    for (args, field) in [
        (json!({}), "text"),
        (json!({ "text": "" }), "text"),
        (json!({ "text": "a", "algorithm": "md5" }), "algorithm"),
        (json!({ "text": "a", "salt": "x" }), "salt"),
    ] {
        let bad = p.call("checksum", args.clone());
        let t = error_text(&bad);
        assert!(names_field(&t, field), "{args}: {t}");
    }
}

#[test]
fn media_schema_is_the_tools_list_with_the_dynamic_tools() {
    let out = run(MEDIA, &["schema"]);
    assert_eq!(out.code(), 0, "{out:?}");
    let schema = out.json();
    let listed = schema["tools"].as_array().expect("tools").clone();
    let expected: BTreeSet<String> = [
        "briefing",
        "checksum",
        "clip",
        "detect_scenes",
        "embedded_files",
        "gallery",
        "latest_report",
        "mix_colors",
        "palette",
        "swatch",
        "tone",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(names(&listed), expected);
    for t in &listed {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    // The same definitions a client gets.
    let mut p = Proc::initialized(MEDIA);
    assert_eq!(p.tools(), listed);
}
