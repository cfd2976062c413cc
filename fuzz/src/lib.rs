//! What the fuzz targets share: the servers they drive (a few plain tools for the protocol
//! targets, tools with rich parameter types for `arguments`), the runtime each input runs on,
//! and the oracle that every message a server writes is well-formed JSON-RPC 2.0.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use mcp_tool::extract::Elicitation;
use mcp_tool::prelude::*;
use mcp_tool::resource::Resource;
use mcp_tool::server::ServerHandle;
use serde_json::{Value, json};

/// A current-thread runtime whose clock is paused: time moves only when every task waits, so
/// grace periods and timeouts cost no wall time and an input replays the same way.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

/// An answer the user gives to `ask`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Sure {
    /// Really?
    pub sure: bool,
}

/// A shape, the argument of `area`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        radius: f64,
    },
    /// A rectangle.
    Rect {
        /// Width.
        w: u32,
        /// Height.
        h: u32,
    },
}

/// The tools of the protocol targets (`jsonrpc`, `http_request`): plain ones, one that errs,
/// one that reports progress and logs, one that asks the client.
pub struct Plain;

#[tools(manual)]
impl Plain {
    /// Echo a text.
    #[tool(read_only)]
    async fn echo(text: String) -> String {
        text
    }

    /// Add two integers (an error on overflow).
    #[tool]
    fn add(a: i64, b: i64) -> Result<i64, ToolError> {
        a.checked_add(b)
            .ok_or_else(|| ToolError::new("OVERFLOW", "the sum overflows"))
    }

    /// The area of a shape, as structured content.
    #[tool]
    async fn area(shape: Shape) -> Json<f64> {
        Json(match shape {
            Shape::Circle { radius } => std::f64::consts::PI * radius * radius,
            Shape::Rect { w, h } => f64::from(w) * f64::from(h),
        })
    }

    /// Report progress `steps` times and log each step.
    #[tool]
    async fn chatty(ctx: Ctx, #[arg(default)] steps: u8) -> String {
        let steps = steps.min(8);
        for i in 0..steps {
            ctx.progress(f64::from(i), f64::from(steps), "step");
            ctx.logger().info(format!("step {i}"));
        }
        format!("{steps} steps")
    }

    /// Ask the user first.
    #[tool(destructive)]
    async fn ask(ctx: Ctx, what: String) -> Result<String, ToolError> {
        match ctx.elicit::<Sure>(format!("Really {what}?")).await? {
            Elicitation::Accept(Sure { sure: true }) => Ok(format!("did {what}")),
            _ => Ok("did nothing".into()),
        }
    }
}

/// The server of the protocol targets: [`Plain`]'s tools, a resource and a prompt.
pub fn plain_server() -> ServerHandle {
    Server::new("fuzz", "0.0.0")
        .without_registry()
        .tools(Plain::mcp_tools())
        .resource(Resource::text(
            "mem://readme",
            "readme",
            "text/plain",
            "hello",
        ))
        .page_size(2)
        .build()
        .expect("the fuzz server builds")
}

// ---- rich parameter types (the `arguments` target) ----

/// A colour: a unit-variant enum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    /// Red.
    #[default]
    Red,
    /// Green.
    Green,
    /// Blue.
    Blue,
}

/// An externally tagged enum of every variant kind.
#[derive(Debug, Deserialize, JsonSchema)]
pub enum Mixed {
    /// A unit variant.
    Unit,
    /// A newtype variant.
    Newtype(i32),
    /// A tuple variant.
    Pair(u8, String),
    /// A struct variant.
    Point {
        /// x
        x: i16,
        /// y
        y: i16,
    },
}

/// An untagged enum.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NumOrText {
    /// A number.
    Num(f64),
    /// A text.
    Text(String),
}

/// A nested struct.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    /// The street.
    #[schemars(length(min = 1, max = 40))]
    pub street: String,
    /// A postal code of digits.
    #[schemars(regex(pattern = r"^[0-9]{4,6}$"))]
    pub zip: String,
    /// The country, if given.
    pub country: Option<String>,
}

/// A person: formats, ranges, lengths, nesting, defaults.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Person {
    /// An email address.
    #[schemars(email)]
    pub email: String,
    /// A name of 2 to 20 characters.
    #[schemars(length(min = 2, max = 20))]
    pub name: String,
    /// An age.
    #[schemars(range(max = 150))]
    pub age: u8,
    /// A web page.
    #[schemars(url)]
    pub homepage: Option<String>,
    /// When the person was born.
    #[schemars(extend("format" = "date-time"))]
    pub born: Option<String>,
    /// An address.
    pub address: Address,
    /// Other addresses.
    #[serde(default)]
    pub others: Vec<Address>,
    /// Tags, at most 5.
    #[schemars(length(max = 5))]
    #[serde(default)]
    pub tags: Vec<String>,
    /// A favourite colour.
    #[serde(default)]
    pub color: Color,
    /// Free-form attributes.
    pub meta: Option<HashMap<String, i64>>,
}

/// Numbers of every width.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Widths {
    /// i8
    pub i8: i8,
    /// i16
    pub i16: i16,
    /// i32
    pub i32: i32,
    /// i64
    pub i64: i64,
    /// u8
    pub u8: u8,
    /// u16
    pub u16: u16,
    /// u32
    pub u32: u32,
    /// u64
    pub u64: u64,
    /// f32
    pub f32: f32,
    /// f64
    pub f64: f64,
    /// usize
    pub usize: Option<usize>,
    /// isize
    pub isize: Option<isize>,
}

/// Whether a tool of [`Rich`] ran in the current input (a synchronous tool may run on a
/// thread of the blocking pool, so not a thread-local).
pub static RAN: AtomicBool = AtomicBool::new(false);

fn ran() {
    RAN.store(true, Ordering::SeqCst);
}

/// Checks what a tool received against the rules its schema states: a value that passed
/// validation must keep them.
fn check_person(p: &Person) {
    let chars = p.name.chars().count();
    assert!((2..=20).contains(&chars), "name of {chars} characters ran");
    assert!(p.age <= 150, "age {} ran", p.age);
    assert!(p.tags.len() <= 5, "{} tags ran", p.tags.len());
    assert!(p.email.contains('@'), "email {:?} ran", p.email);
    for a in std::iter::once(&p.address).chain(&p.others) {
        let street = a.street.chars().count();
        assert!(
            (1..=40).contains(&street),
            "street of {street} characters ran"
        );
        assert!(
            (4..=6).contains(&a.zip.len()) && a.zip.bytes().all(|b| b.is_ascii_digit()),
            "zip {:?} ran",
            a.zip
        );
    }
}

/// The tools of the `arguments` target, whose parameters cover what tools take.
pub struct Rich;

#[tools(manual)]
impl Rich {
    /// Register a person.
    #[tool]
    async fn register(Args(p): Args<Person>) -> String {
        ran();
        check_person(&p);
        p.name
    }

    /// Numbers of every width, as named parameters.
    #[tool]
    #[allow(clippy::too_many_arguments)]
    fn widths(
        a: i8,
        b: i16,
        c: i32,
        d: i64,
        e: u8,
        f: u16,
        g: u32,
        h: u64,
        x: f32,
        y: f64,
        z: Option<u128>,
    ) -> String {
        ran();
        format!("{a} {b} {c} {d} {e} {f} {g} {h} {x} {y} {z:?}")
    }

    /// Numbers of every width, as one struct.
    #[tool]
    async fn widths_struct(Args(w): Args<Widths>) -> String {
        ran();
        format!("{w:?}")
    }

    /// Enums of every kind, optional and defaulted parameters.
    #[tool]
    async fn enums(
        color: Color,
        mixed: Mixed,
        either: Option<NumOrText>,
        #[arg(default)] colors: Vec<Color>,
        #[arg(rename = "shapeOf")] shape: Option<Shape>,
    ) -> String {
        ran();
        format!("{color:?} {mixed:?} {either:?} {colors:?} {shape:?}")
    }

    /// A nested person and a bounded count.
    #[tool]
    async fn nested(
        person: Person,
        #[arg(description = "How many")] count: Option<u16>,
        flags: Option<Vec<bool>>,
        table: Option<HashMap<String, Vec<Option<i32>>>>,
    ) -> Json<u16> {
        ran();
        check_person(&person);
        let _ = (flags, table);
        Json(count.unwrap_or(0))
    }
}

/// The server of the `arguments` target: [`Rich`]'s tools.
pub fn rich_server() -> ServerHandle {
    Server::new("fuzz-rich", "0.0.0")
        .without_registry()
        .tools(Rich::mcp_tools())
        .build()
        .expect("the rich fuzz server builds")
}

/// The names of [`Rich`]'s tools, in the order the `arguments` target picks them.
pub const RICH_TOOLS: [&str; 5] = ["register", "widths", "widths_struct", "enums", "nested"];

// ---- the JSON-RPC oracle ----

/// Whether `id` can be a JSON-RPC id (a string, a number, or null in some error responses).
fn is_id(id: &Value) -> bool {
    id.is_string() || id.is_number() || id.is_null()
}

/// Checks that `message` is one well-formed JSON-RPC 2.0 message (a response, a request or a
/// notification); `Err` says what is wrong.
pub fn check_message(message: &Value) -> Result<(), String> {
    let Some(obj) = message.as_object() else {
        return Err("not an object".into());
    };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Err("no `\"jsonrpc\": \"2.0\"`".into());
    }
    if let Some(method) = obj.get("method") {
        if !method.is_string() {
            return Err("`method` is not a string".into());
        }
        if obj.contains_key("result") || obj.contains_key("error") {
            return Err("a request with `result` or `error`".into());
        }
        if let Some(params) = obj.get("params")
            && !(params.is_object() || params.is_array())
        {
            return Err("`params` is neither an object nor an array".into());
        }
        if let Some(id) = obj.get("id")
            && !(id.is_string() || id.is_number())
        {
            return Err("a request's `id` is neither a string nor a number".into());
        }
        return Ok(());
    }
    let Some(id) = obj.get("id") else {
        return Err("a response without `id`".into());
    };
    if !is_id(id) {
        return Err("a response's `id` is neither a string, a number nor null".into());
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => Ok(()),
        (None, Some(error)) => {
            let code_ok = error.get("code").is_some_and(|c| c.is_i64() || c.is_u64());
            let message_ok = error.get("message").is_some_and(Value::is_string);
            if code_ok && message_ok {
                Ok(())
            } else {
                Err("an error without an integer `code` and a string `message`".into())
            }
        }
        _ => Err("a response needs exactly one of `result` and `error`".into()),
    }
}

/// A message's `id`, read without reading its other values (the server reads lines so: a
/// number too large for a float elsewhere in the line does not stop it).
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    id: Option<&'a serde_json::value::RawValue>,
}

/// An id as a key: its JSON value, normalized, or its text when it is no `Value`.
fn id_key(raw: &serde_json::value::RawValue) -> String {
    serde_json::from_str::<Value>(raw.get())
        .map_or_else(|_| raw.get().to_owned(), |v| v.to_string())
}

/// The ids of the requests among the lines a client sent (anything with an `id`, well-formed
/// or not; a batch's members too), counted.
pub fn request_ids(lines: &[&str]) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for line in lines {
        // The server trims ASCII whitespace (form feed included) around a line.
        let line = line.trim_matches(|c: char| c.is_ascii_whitespace());
        let peeks: Vec<Peek<'_>> = if let Ok(one) = serde_json::from_str::<Peek<'_>>(line) {
            vec![one]
        } else if let Ok(batch) = serde_json::from_str::<Vec<Peek<'_>>>(line) {
            batch
        } else {
            // A member given twice (the last one counts): the server answers with that id.
            if let Ok(value) = serde_json::from_str::<Value>(line) {
                let messages = match value {
                    Value::Array(batch) => batch,
                    one => vec![one],
                };
                for id in messages.iter().filter_map(|m| m.get("id")) {
                    *ids.entry(id.to_string()).or_default() += 1;
                }
            }
            continue;
        };
        for id in peeks.iter().filter_map(|p| p.id) {
            *ids.entry(id_key(id)).or_default() += 1;
        }
    }
    ids
}

/// A line the server wrote, as a `Value`. A response echoes its request's id exactly, so an
/// id that is a number too large for a float (valid JSON, which `Value` cannot hold) comes
/// back as it was sent: such a line is read with its id, checked to be a number, taken as 0.
fn parse_output(line: &str) -> serde_json::Result<Value> {
    serde_json::from_str(line).or_else(|e| {
        let Ok(Peek { id: Some(raw) }) = serde_json::from_str::<Peek<'_>>(line) else {
            return Err(e);
        };
        let text = raw.get();
        let is_number = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
            && text.starts_with(|c: char| c == '-' || c.is_ascii_digit());
        if !is_number {
            return Err(e);
        }
        // `raw` borrows from `line`: its place in the line, by address.
        let start = text.as_ptr() as usize - line.as_ptr() as usize;
        let patched = format!("{}0{}", &line[..start], &line[start + text.len()..]);
        serde_json::from_str(&patched)
    })
}

/// Checks everything a server wrote in answer to `input`: one JSON-RPC message a line, and no
/// more responses to an id than the client sent requests with it. Panics, saying why.
pub fn check_output(input: &[&str], output: &str) {
    let sent = request_ids(input);
    let mut answered: HashMap<String, usize> = HashMap::new();
    for line in output.lines() {
        let message: Value = parse_output(line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"));
        if let Err(why) = check_message(&message) {
            panic!("the server wrote a malformed message ({why}): {line}");
        }
        if message.get("method").is_none() && !message["id"].is_null() {
            let raw: Peek<'_> = serde_json::from_str(line).expect("read above");
            let id = id_key(raw.id.expect("a response has an id"));
            let n = answered.entry(id.clone()).or_default();
            *n += 1;
            let limit = sent.get(&id).copied().unwrap_or(0);
            assert!(
                *n <= limit,
                "{n} responses to id {id}, which {limit} messages carried: {line}"
            );
        }
    }
}
