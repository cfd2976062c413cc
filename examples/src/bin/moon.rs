//! `moon`: seed 004's moon app. `show_moon` gives the moon's phase on a date as structured
//! content, drawn by an MCP Apps view (`ui/moon.html`, served as `ui://moon/moon`); the view
//! steps a day back or forward through `moon_refresh`, an app-only tool (`visibility =
//! ["app"]`: listed only to clients that declared MCP Apps, whose hosts keep it from the
//! model); `moon_facts` answers in text only. Everything is computed here: no network.
//!
//! The view is built from `ui/src/moon.html` and `ui/src/moon.js` (the official ext-apps
//! `App` class, bundled in) by `node apps/build-views.mjs`; the built file is committed, so
//! `cargo build` needs no Node.

use mcp_tool::prelude::*;
use mcp_tool::resource::UiResourceMeta;

/// The mean length of a lunar cycle (new moon to new moon), in days.
const SYNODIC_MONTH: f64 = 29.530_588_853;

/// A new moon to count from: 2000-01-06 18:14 UTC, as a Julian day.
const KNOWN_NEW_MOON: f64 = 2_451_550.259_7;

/// The Julian day of 1970-01-01 00:00 UTC.
const UNIX_EPOCH_JD: f64 = 2_440_587.5;

/// The phases, each an eighth of the cycle centred on its exact moment: name and emoji.
const PHASES: [(&str, &str); 8] = [
    ("New Moon", "🌑"),
    ("Waxing Crescent", "🌒"),
    ("First Quarter", "🌓"),
    ("Waxing Gibbous", "🌔"),
    ("Full Moon", "🌕"),
    ("Waning Gibbous", "🌖"),
    ("Last Quarter", "🌗"),
    ("Waning Crescent", "🌘"),
];

/// The moon on one date, at noon UTC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct MoonPhase {
    /// The date, as YYYY-MM-DD
    date: String,
    /// The phase's name, such as "Waxing Gibbous"
    phase: String,
    /// How much of the disc is lit, in percent (0-100)
    illumination: f64,
    /// Days since the last new moon (0 to 29.53)
    age_days: f64,
    /// The phase as an emoji
    emoji: String,
}

/// A calendar date (proleptic Gregorian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Date {
    year: i64,
    month: u32,
    day: u32,
}

impl Date {
    /// Parses `YYYY-MM-DD` exactly (zero-padded, a day that exists in its month).
    fn parse(text: &str) -> Option<Date> {
        let b = text.as_bytes();
        let shape_ok = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !shape_ok {
            return None;
        }
        let year: i64 = text[0..4].parse().ok()?;
        let month: u32 = text[5..7].parse().ok()?;
        let day: u32 = text[8..10].parse().ok()?;
        let date = Date { year, month, day };
        ((1..=12).contains(&month) && day >= 1 && day <= date.days_in_month()).then_some(date)
    }

    fn days_in_month(self) -> u32 {
        let leap = (self.year % 4 == 0 && self.year % 100 != 0) || self.year % 400 == 0;
        match self.month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    /// Days since 1970-01-01.
    fn days_since_epoch(self) -> i64 {
        mcp_tool_examples::days_from_civil(self.year, self.month, self.day)
    }

    /// The date `days` after 1970-01-01.
    fn from_days_since_epoch(days: i64) -> Date {
        let (year, month, day) = mcp_tool_examples::civil_from_days(days);
        Date { year, month, day }
    }

    /// Today, in UTC.
    fn today() -> Date {
        Date::from_days_since_epoch(mcp_tool_examples::days_today())
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Rounds to `places` decimals.
fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

/// The moon at noon UTC on `date`, from the mean synodic month: the moon's age is the time
/// since a known new moon modulo the cycle's length, and the lit fraction of the disc is
/// `(1 - cos(2π · age / cycle)) / 2`. The mean cycle is within about half a day of the true
/// one, which is plenty for naming the phase.
fn moon_on(date: Date) -> MoonPhase {
    let jd = date.days_since_epoch() as f64 + UNIX_EPOCH_JD + 0.5;
    let age = (jd - KNOWN_NEW_MOON).rem_euclid(SYNODIC_MONTH);
    let fraction = age / SYNODIC_MONTH;
    let illumination = (1.0 - (2.0 * std::f64::consts::PI * fraction).cos()) / 2.0;
    let index = ((fraction * 8.0 + 0.5).floor() as usize) % 8;
    let (phase, emoji) = PHASES[index];
    MoonPhase {
        date: date.to_string(),
        phase: phase.to_owned(),
        illumination: round(illumination * 100.0, 1),
        age_days: round(age, 2),
        emoji: emoji.to_owned(),
    }
}

/// What `moon_facts` knows about.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Topic {
    /// How far away the Moon is
    Distance,
    /// How big the Moon is
    Size,
    /// The Moon's surface gravity
    Gravity,
    /// Why the Moon has phases
    Phases,
}

impl Topic {
    const ALL: [Topic; 4] = [Topic::Distance, Topic::Size, Topic::Gravity, Topic::Phases];

    fn fact(self) -> &'static str {
        match self {
            Topic::Distance => "The Moon is 384,400 km away on average.",
            Topic::Size => "The Moon is 3,474 km across, about a quarter of the Earth's width.",
            Topic::Gravity => "Gravity on the Moon is about one sixth of the Earth's (1.62 m/s²).",
            Topic::Phases => {
                "A lunar cycle, new moon to new moon, lasts 29.53 days on average; the phase is how much of the sunlit half faces us."
            }
        }
    }
}

/// The moon app's tools (no state: a unit service).
struct Moon;

#[tools]
impl Moon {
    /// Show the moon phase for a date. Use when the user asks about the moon on a date.
    #[tool(
        title = "Show moon phase",
        read_only,
        idempotent,
        open_world = false,
        invoking = "Looking up",
        invoked = "Here's the moon",
        ui = "moon",
        examples(
            request = r#"{"date": "2024-04-08"}"#,
            response = r#"{"date": "2024-04-08", "phase": "New Moon", "illumination": 0.2, "ageDays": 29.09, "emoji": "🌑"}"#
        )
    )]
    fn show_moon(
        &self,
        #[arg(description = "Date as YYYY-MM-DD. Defaults to today (UTC).")] date: Option<String>,
    ) -> Result<Json<MoonPhase>, ToolError> {
        let date = match date {
            None => Date::today(),
            Some(text) => Date::parse(&text).ok_or_else(|| {
                ToolError::new(
                    "INVALID_DATE",
                    format!(
                        "`date` must be a calendar date written YYYY-MM-DD (such as 2024-04-08), not {text:?}"
                    ),
                )
                .suggestion("write the date as YYYY-MM-DD, or leave `date` out for today")
            })?,
        };
        Ok(Json(moon_on(date)))
    }

    /// The moon on another date, for the view's day-by-day steps (app-only: never offered
    /// to the model, which has `show_moon`).
    #[tool(
        title = "Moon phase for the view",
        read_only,
        idempotent,
        open_world = false,
        ui = "moon",
        visibility = ["app"]
    )]
    fn moon_refresh(
        &self,
        #[arg(description = "Date as YYYY-MM-DD")] date: String,
    ) -> Result<Json<MoonPhase>, ToolError> {
        self.show_moon(Some(date))
    }

    /// Answer a quick moon question in text: one fact about a topic, or all of them.
    #[tool(title = "Moon facts", read_only, idempotent, open_world = false)]
    fn moon_facts(
        &self,
        #[arg(description = "What to tell about; every fact when left out")] topic: Option<Topic>,
    ) -> String {
        match topic {
            Some(t) => t.fact().to_owned(),
            None => Topic::ALL
                .iter()
                .map(|t| t.fact())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

fn main() -> mcp_tool::Result<()> {
    Server::new("moon", env!("CARGO_PKG_VERSION"))
        .title("Moon phases")
        // The view is one self-contained file (inline style and script, no fonts, images or
        // fetches), so it needs no domain at all: empty lists say so explicitly in the view's
        // `_meta.ui.csp`, rather than leaving each host to guess, and any domain added later
        // would be a change to review here. It draws its own disc, framed by the host.
        .ui_meta(
            "moon",
            UiResourceMeta::new()
                .connect_domains(std::iter::empty::<&str>())
                .resource_domains(std::iter::empty::<&str>())
                .prefers_border(true),
        )
        .service(Moon)
        .run()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_strictly() {
        assert_eq!(
            Date::parse("2024-02-29"),
            Some(Date {
                year: 2024,
                month: 2,
                day: 29
            })
        );
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-04-31",
            "2024-4-8",
            "24-04-08",
            "2024/04/08",
            "tomorrow",
            "",
            "2024-04-08T00:00",
        ] {
            assert_eq!(Date::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn days_round_trip() {
        for text in ["1970-01-01", "2000-02-29", "2024-04-08", "1900-03-01"] {
            let d = Date::parse(text).unwrap();
            assert_eq!(Date::from_days_since_epoch(d.days_since_epoch()), d);
            assert_eq!(d.to_string(), text);
        }
        assert_eq!(Date::parse("1970-01-02").unwrap().days_since_epoch(), 1);
    }

    #[test]
    fn known_phases() {
        // April 2024: new moon on the 8th (the total solar eclipse), first quarter on the
        // 15th, full moon on the 23rd, last quarter on May 1st.
        for (date, phase) in [
            ("2024-04-08", "New Moon"),
            ("2024-04-15", "First Quarter"),
            ("2024-04-23", "Full Moon"),
            ("2024-05-01", "Last Quarter"),
        ] {
            assert_eq!(moon_on(Date::parse(date).unwrap()).phase, phase, "{date}");
        }
        let full = moon_on(Date::parse("2024-04-23").unwrap());
        assert!(full.illumination > 97.0, "{full:?}");
    }
}
