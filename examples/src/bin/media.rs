//! `media`: every kind of block a tool result can carry. An image (a PNG drawn here) and audio
//! (a WAV sine tone synthesised here), a link to a resource the server offers, embedded
//! resources (text and binary), annotated blocks, a block type of our own (seed 000's
//! `VideoContent`, through `IntoContent`), several blocks at once, a full `ToolResult` with
//! structured content and `_meta`, structured content alone (the framework writes its text
//! copy), and two tools defined at run time with `DynamicTool`. No network, no files.

use mcp_tool::content::{
    Audience, ContentAnnotations, IntoContent, ResourceContents, ResourceLink, base64_encode,
};
use mcp_tool::dynamic::{Annotations, DynamicArgs, DynamicTool, ToolProperty};
use mcp_tool::prelude::*;
use mcp_tool::resource::Resource;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// PNG and WAV, written by hand.

/// The CRC-32 of PNG chunks (ISO 3309, reflected polynomial 0xEDB88320).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFF_u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The Adler-32 checksum that ends a zlib stream.
fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1_u32, 0_u32);
    for &x in bytes {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

/// A zlib stream holding `data` in stored (uncompressed) deflate blocks: valid, if not small.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    // CMF 0x78 (deflate, 32 KiB window), FLG 0x01: 0x7801 is a multiple of 31, as required.
    let mut out = vec![0x78, 0x01];
    if data.is_empty() {
        out.extend([0x01, 0x00, 0x00, 0xFF, 0xFF]);
    }
    let mut blocks = data.chunks(usize::from(u16::MAX)).peekable();
    while let Some(block) = blocks.next() {
        // BFINAL on the last block, BTYPE 00 (stored); then LEN and its complement.
        out.push(u8::from(blocks.peek().is_none()));
        let len = u16::try_from(block.len()).expect("chunks of at most u16::MAX");
        out.extend(len.to_le_bytes());
        out.extend((!len).to_le_bytes());
        out.extend(block);
    }
    out.extend(adler32(data).to_be_bytes());
    out
}

/// Appends one PNG chunk: length, type, data, CRC of type and data.
fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend(
        u32::try_from(data.len())
            .expect("small chunk")
            .to_be_bytes(),
    );
    let start = out.len();
    out.extend(kind);
    out.extend(data);
    let crc = crc32(&out[start..]);
    out.extend(crc.to_be_bytes());
}

/// The PNG signature.
const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n'];

/// A truecolour 8-bit PNG of `width` × `height` pixels coloured by `pixel(x, y)`.
fn png_rgb(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    let mut raw = Vec::with_capacity((height * (1 + width * 3)) as usize);
    for y in 0..height {
        raw.push(0); // filter type: none
        for x in 0..width {
            raw.extend(pixel(x, y));
        }
    }
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut out = PNG_SIGNATURE.to_vec();
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    png_chunk(&mut out, b"IEND", &[]);
    out
}

/// The sample rate of the tones: 8 kHz, mono, 16-bit PCM.
const SAMPLE_RATE: u32 = 8_000;

/// A WAV file (RIFF, PCM) of a sine tone at `frequency` Hz lasting `duration_ms`, faded in
/// and out over 5 ms so it starts and ends without a click.
fn wav_sine(frequency: u32, duration_ms: u32) -> Vec<u8> {
    let samples = SAMPLE_RATE * duration_ms / 1000;
    let data_len = samples * 2;
    let mut out = Vec::with_capacity(44 + data_len as usize);
    out.extend(b"RIFF");
    out.extend((36 + data_len).to_le_bytes());
    out.extend(b"WAVE");
    out.extend(b"fmt ");
    out.extend(16_u32.to_le_bytes()); // the size of this chunk
    out.extend(1_u16.to_le_bytes()); // PCM
    out.extend(1_u16.to_le_bytes()); // mono
    out.extend(SAMPLE_RATE.to_le_bytes());
    out.extend((SAMPLE_RATE * 2).to_le_bytes()); // bytes per second
    out.extend(2_u16.to_le_bytes()); // bytes per frame
    out.extend(16_u16.to_le_bytes()); // bits per sample
    out.extend(b"data");
    out.extend(data_len.to_le_bytes());
    let fade = f64::from(SAMPLE_RATE) * 0.005;
    for i in 0..samples {
        let t = f64::from(i) / f64::from(SAMPLE_RATE);
        let edge = f64::from(i.min(samples - 1 - i));
        let gain = (edge / fade).min(1.0) * 0.5;
        let v = (2.0 * std::f64::consts::PI * f64::from(frequency) * t).sin() * gain;
        out.extend(((v * f64::from(i16::MAX)) as i16).to_le_bytes());
    }
    out
}

/// `#RRGGBB` as bytes (the input schema's pattern has checked the shape already).
fn parse_hex(color: &str) -> Option<[u8; 3]> {
    let hex = color.strip_prefix('#')?;
    if hex.len() != 6 || !hex.is_ascii() {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

fn to_hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

// ---------------------------------------------------------------------------------------------
// A block type of our own.

/// Seed 000's hypothetical `VideoContent`: a block type MCP does not define, added without
/// touching the framework by saying what its JSON form is. (A client that checks blocks
/// against the MCP schema strictly may refuse a type it does not know: that is the price of
/// a custom block.)
struct VideoContent {
    data: Vec<u8>,
    mime_type: String,
    duration_ms: Option<u64>,
}

impl IntoContent for VideoContent {
    fn into_content(self) -> Content {
        let mut block = json!({
            "type": "video",
            "data": base64_encode(&self.data),
            "mimeType": self.mime_type,
        });
        if let Some(ms) = self.duration_ms {
            block["durationMs"] = Value::from(ms);
        }
        Content::Raw(block)
    }
}

/// The first box of an MP4 file (`ftyp`: ISO base media, brand `isom`): a stand-in for video
/// bytes, enough to show the wire shape and to be recognised as MP4 by its magic.
const MP4_FTYP: [u8; 24] = [
    0, 0, 0, 24, b'f', b't', b'y', b'p', b'i', b's', b'o', b'm', 0, 0, 2, 0, b'i', b's', b'o',
    b'm', b'm', b'p', b'4', b'1',
];

fn demo_clip() -> VideoContent {
    VideoContent {
        data: MP4_FTYP.to_vec(),
        mime_type: "video/mp4".into(),
        duration_ms: Some(1_500),
    }
}

// ---------------------------------------------------------------------------------------------
// Tools.

fn default_size() -> u32 {
    16
}

/// A square of one colour.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Swatch {
    /// The colour, as #RRGGBB
    #[schemars(regex(pattern = r"^#[0-9a-fA-F]{6}$"))]
    color: String,
    /// Width and height in pixels (1-64)
    #[schemars(range(min = 1, max = 64))]
    #[serde(default = "default_size")]
    size: u32,
}

impl Swatch {
    fn png(&self) -> Result<Vec<u8>, ToolError> {
        let rgb = parse_hex(&self.color).ok_or_else(|| {
            ToolError::new(
                "INVALID_COLOR",
                format!("`color` must be #RRGGBB, not {:?}", self.color),
            )
        })?;
        Ok(png_rgb(self.size, self.size, |_, _| rgb))
    }
}

/// Draw a square swatch of a colour, as a PNG image.
#[tool(title = "Colour swatch", read_only, idempotent, open_world = false)]
fn swatch(Args(s): Args<Swatch>) -> Result<Content, ToolError> {
    Ok(Content::image(s.png()?, "image/png"))
}

fn default_frequency() -> u32 {
    440
}

fn default_duration() -> u32 {
    250
}

/// A sine tone.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Tone {
    /// Pitch in hertz (20-3000; 440 is the A above middle C)
    #[schemars(range(min = 20, max = 3000))]
    #[serde(default = "default_frequency")]
    frequency: u32,
    /// Length in milliseconds (10-2000)
    #[schemars(range(min = 10, max = 2000))]
    #[serde(default = "default_duration")]
    duration_ms: u32,
}

/// Play a sine tone, as a WAV file.
#[tool(title = "Tone", read_only, idempotent, open_world = false)]
fn tone(Args(t): Args<Tone>) -> Content {
    Content::audio(wav_sine(t.frequency, t.duration_ms), "audio/wav")
}

/// The report that `latest_report` links to, offered as a resource.
const REPORT_URI: &str = "media://reports/latest.md";
const REPORT: &str =
    "# Media report\n\nEvery block type renders. Swatches are PNG, tones are WAV.\n";

/// Link to the latest media report (a resource the client can read with `resources/read`).
#[tool(title = "Latest report", read_only, idempotent, open_world = false)]
fn latest_report() -> Content {
    Content::ResourceLink(ResourceLink {
        uri: REPORT_URI.into(),
        name: "latest.md".into(),
        title: Some("Latest media report".into()),
        description: Some("What the media server produced most recently".into()),
        mime_type: Some("text/markdown".into()),
        size: Some(REPORT.len() as u64),
        ..ResourceLink::default()
    })
}

/// Return two files embedded whole: a text file and a one-pixel PNG.
#[tool(title = "Embedded files", read_only, idempotent, open_world = false)]
fn embedded_files() -> Vec<Content> {
    vec![
        Content::resource(ResourceContents::text(
            "media://embedded/hello.txt",
            "text/plain",
            "Hello from an embedded resource.",
        )),
        Content::resource(ResourceContents::blob(
            "media://embedded/dot.png",
            "image/png",
            png_rgb(1, 1, |_, _| [0xFF, 0x00, 0x00]),
        )),
    ]
}

/// A summary for the user and a note for the assistant, each annotated with its audience and
/// priority.
#[tool(title = "Briefing", read_only, idempotent, open_world = false)]
fn briefing() -> Vec<Content> {
    vec![
        Content::text("Your media is ready.").annotate(ContentAnnotations {
            audience: vec![Audience::User],
            priority: Some(1.0),
            last_modified: None,
        }),
        Content::text("Internal: 3 blocks rendered, none failed.").annotate(ContentAnnotations {
            audience: vec![Audience::Assistant],
            priority: Some(0.25),
            last_modified: Some("2025-01-15T10:30:00Z".into()),
        }),
    ]
}

/// A short video clip: a block type of our own (`video`), through `IntoContent`.
#[tool(title = "Clip", read_only, idempotent, open_world = false)]
fn clip() -> Content {
    Content::from_block(demo_clip())
}

/// A swatch, a tone and a caption together: several blocks of different types.
#[tool(title = "Gallery", read_only, idempotent, open_world = false)]
fn gallery(Args(s): Args<Swatch>) -> Result<Vec<Content>, ToolError> {
    Ok(vec![
        Content::text(format!(
            "A {0}px swatch of {1} and an A440 tone",
            s.size, s.color
        )),
        Content::image(s.png()?, "image/png"),
        Content::audio(wav_sine(440, 100), "audio/wav"),
    ])
}

/// Detect the scenes of the demo clip: text and the clip for the model, the counts as
/// structured content, and the detector's name in the result's `_meta` (seed 000's full
/// response).
#[tool(
    title = "Detect scenes",
    read_only,
    idempotent,
    open_world = false,
    output_schema = r#"{
        "type": "object",
        "properties": {
            "scenes": { "type": "integer", "minimum": 0 },
            "confidence": { "type": "number", "minimum": 0, "maximum": 1 }
        },
        "required": ["scenes", "confidence"]
    }"#
)]
fn detect_scenes() -> ToolResult {
    let mut meta = Map::new();
    meta.insert(
        "dev.mcp-tool.examples/detector".into(),
        json!({ "name": "scene-counter", "version": 1 }),
    );
    ToolResult {
        content: vec![
            Content::text("Detected 3 scenes"),
            Content::from_block(demo_clip()),
        ],
        structured_content: Some(json!({ "scenes": 3, "confidence": 0.92 }).into()),
        meta: Some(meta),
        ..ToolResult::default()
    }
}

/// The colours that go with one: its complement, a lighter and a darker shade. Structured
/// content only; the framework adds its JSON text copy for clients that read only `content`.
#[tool(title = "Palette", read_only, idempotent, open_world = false)]
fn palette(
    #[arg(description = "The base colour, as #RRGGBB")] color: String,
) -> Result<ToolResult, ToolError> {
    let rgb = parse_hex(&color).ok_or_else(|| {
        ToolError::new(
            "INVALID_COLOR",
            format!("`color` must be #RRGGBB, not {color:?}"),
        )
        .suggestion("write the colour as # and six hex digits, such as #3366cc")
    })?;
    let complement = rgb.map(|c| 255 - c);
    let lighter = rgb.map(|c| c + (255 - c) / 2);
    let darker = rgb.map(|c| c / 2);
    Ok(ToolResult {
        structured_content: Some(
            json!({
                "base": to_hex(rgb),
                "complement": to_hex(complement),
                "lighter": to_hex(lighter),
                "darker": to_hex(darker),
            })
            .into(),
        ),
        ..ToolResult::default()
    })
}

// ---------------------------------------------------------------------------------------------
// Tools defined at run time.

/// The hints of the dynamic tools: they compute, and touch nothing.
fn read_only() -> Annotations {
    Annotations {
        read_only: Some(true),
        idempotent: Some(true),
        open_world: Some(false),
        ..Annotations::default()
    }
}

/// `mix_colors`, from a typed property list (seed 000's `McpToolProperty`): a weighted
/// average of colours.
fn mix_colors() -> DynamicTool {
    DynamicTool::new(
        "mix_colors",
        "Mix colours given as #RRGGBB, optionally weighted; returns the mixed colour.",
        |args: DynamicArgs| async move { mix(&args.arguments) },
    )
    .title("Mix colours")
    .annotations(read_only())
    .property(
        ToolProperty::string("colors")
            .description("The colours to mix, each as #RRGGBB")
            .required()
            .array(),
    )
    .property(
        ToolProperty::number("weights")
            .description("One weight per colour (default: equal weights)")
            .array(),
    )
    .property(ToolProperty::boolean("as_rgb").description("Answer as rgb(r, g, b) instead of hex"))
}

fn mix(arguments: &Map<String, Value>) -> Result<String, ToolError> {
    let colors = arguments["colors"].as_array().cloned().unwrap_or_default();
    if colors.is_empty() {
        return Err(ToolError::new(
            "NO_COLORS",
            "colors: give at least one colour",
        ));
    }
    let mut rgbs = Vec::with_capacity(colors.len());
    for (i, c) in colors.iter().enumerate() {
        let text = c.as_str().unwrap_or_default();
        rgbs.push(parse_hex(text).ok_or_else(|| {
            ToolError::new(
                "INVALID_COLOR",
                format!("colors[{i}]: {text:?} is not #RRGGBB"),
            )
        })?);
    }
    let weights: Vec<f64> = match arguments.get("weights").and_then(Value::as_array) {
        None => vec![1.0; rgbs.len()],
        Some(w) if w.len() == rgbs.len() => w.iter().filter_map(Value::as_f64).collect(),
        Some(w) => {
            return Err(ToolError::new(
                "WEIGHTS_MISMATCH",
                format!("weights: {} weights for {} colours", w.len(), rgbs.len()),
            ));
        }
    };
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(ToolError::new(
            "INVALID_WEIGHTS",
            "weights: each must be a finite, non-negative number",
        ));
    }
    // Scaled by the largest, so that huge weights cannot overflow the sums (to black).
    let largest = weights.iter().copied().fold(0.0_f64, f64::max);
    if largest <= 0.0 {
        return Err(ToolError::new(
            "INVALID_WEIGHTS",
            "weights: must be non-negative, and not all zero",
        ));
    }
    let weights: Vec<f64> = weights.iter().map(|w| w / largest).collect();
    let total: f64 = weights.iter().sum();
    let channel = |k: usize| {
        let sum: f64 = rgbs
            .iter()
            .zip(&weights)
            .map(|(c, w)| f64::from(c[k]) * w)
            .sum();
        (sum / total).round() as u8
    };
    let mixed = [channel(0), channel(1), channel(2)];
    let as_rgb = arguments.get("as_rgb").and_then(Value::as_bool) == Some(true);
    Ok(if as_rgb {
        format!("rgb({}, {}, {})", mixed[0], mixed[1], mixed[2])
    } else {
        to_hex(mixed)
    })
}

/// `checksum`, from a hand-written JSON Schema, with an output schema: the CRC-32 or
/// Adler-32 of a text (the checksums the PNG encoder above uses).
fn checksum() -> DynamicTool {
    DynamicTool::new(
        "checksum",
        "Compute the CRC-32 or Adler-32 checksum of a text's UTF-8 bytes.",
        |args: DynamicArgs| async move {
            let text = args.get_str("text").unwrap_or_default();
            let algorithm = args.get_str("algorithm").unwrap_or("crc32");
            let value = match algorithm {
                "adler32" => adler32(text.as_bytes()),
                _ => crc32(text.as_bytes()),
            };
            Json(json!({ "algorithm": algorithm, "value": value, "hex": format!("{value:08x}") }))
        },
    )
    .title("Checksum")
    .annotations(read_only())
    .input_schema(json!({
        "type": "object",
        "properties": {
            "text": { "type": "string", "minLength": 1, "description": "The text to checksum" },
            "algorithm": {
                "enum": ["crc32", "adler32"],
                "default": "crc32",
                "description": "Which checksum"
            }
        },
        "required": ["text"],
        "additionalProperties": false
    }))
    .output_schema(json!({
        "type": "object",
        "properties": {
            "algorithm": { "enum": ["crc32", "adler32"] },
            "value": { "type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64 },
            "hex": { "type": "string", "pattern": "^[0-9a-f]{8}$" }
        },
        "required": ["algorithm", "value", "hex"]
    }))
}

fn main() -> mcp_tool::Result<()> {
    Server::new("media", env!("CARGO_PKG_VERSION"))
        .title("Media blocks")
        .resource(
            Resource::text(REPORT_URI, "latest.md", "text/markdown", REPORT)
                .title("Latest media report")
                .description("What the media server produced most recently"),
        )
        .dynamic_tool(mix_colors())
        .dynamic_tool(checksum())
        .run()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_weights_mix_like_small_ones() {
        let args = |weights: Value| {
            serde_json::json!({ "colors": ["#ff0000", "#0000ff"], "weights": weights })
                .as_object()
                .cloned()
                .unwrap()
        };
        let small = mix(&args(serde_json::json!([1, 1]))).unwrap();
        let huge = mix(&args(serde_json::json!([1e308, 1e308]))).unwrap();
        assert_eq!(small, huge);
        assert_eq!(huge, "#800080");
    }

    #[test]
    fn checksums_match_known_values() {
        // The standard check values of both algorithms.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        // The CRC of an IEND chunk, as every PNG ends with it.
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
    }

    #[test]
    fn stored_zlib_splits_long_data_into_blocks() {
        let data = vec![7_u8; 70_000];
        let z = zlib_stored(&data);
        // Header, two block headers of 5 bytes, the data, the checksum.
        assert_eq!(z.len(), 2 + 5 + 5 + data.len() + 4);
        assert_eq!(z[2], 0, "the first block is not the last");
        assert_eq!(z[2 + 5 + 65_535], 1, "the second block is the last");
    }

    #[test]
    fn wav_header_sizes_add_up() {
        let wav = wav_sine(440, 250);
        assert_eq!(wav.len(), 44 + 2 * 2000);
        let riff = u32::from_le_bytes(wav[4..8].try_into().unwrap());
        assert_eq!(riff as usize, wav.len() - 8);
    }

    #[test]
    fn colours_parse_and_mix() {
        assert_eq!(parse_hex("#3366cc"), Some([0x33, 0x66, 0xcc]));
        assert_eq!(parse_hex("3366cc"), None);
        assert_eq!(parse_hex("#3366c"), None);
        assert_eq!(to_hex([0x33, 0x66, 0xcc]), "#3366cc");
    }
}
