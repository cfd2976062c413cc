// The moon view: an MCP Apps view (io.modelcontextprotocol/ui) on the official App class of
// @modelcontextprotocol/ext-apps. The host renders it for `show_moon`, sends it the tool's
// result, and relays its calls of `moon_refresh` (an app-only tool: the model never sees it)
// when the user steps a day back or forward. Everything is drawn here: it loads nothing.
//
// apps/build-views.mjs bundles this file with the App class into examples/ui/moon.html,
// which the `moon` example embeds at compile time.

import { App } from "@modelcontextprotocol/ext-apps";

/** The mean synodic month, in days: the share of the cycle gives the terminator's side. */
const SYNODIC_MONTH = 29.530588853;

const $ = (id) => document.getElementById(id);

/** The date shown, as YYYY-MM-DD (set once a result arrives). */
let shown = null;

/**
 * The lit part of a disc of radius `r` at (`cx`, `cy`) as an SVG path: the limb on the lit
 * side (the right while waxing), then the terminator back, an ellipse whose half-width is
 * `r·|1 − 2k|` for the lit fraction `k`, bulging toward the limb for a crescent.
 */
function litPath(ageDays, illumination, cx = 60, cy = 60, r = 56) {
  const k = Math.max(0, Math.min(1, illumination / 100));
  if (k < 0.005) return "";
  const waxing = ageDays % SYNODIC_MONTH < SYNODIC_MONTH / 2;
  const crescent = k < 0.5;
  const rx = (r * Math.abs(1 - 2 * k)).toFixed(2);
  const limb = waxing ? 1 : 0;
  const terminator = waxing === crescent ? 0 : 1;
  return `M ${cx} ${cy - r} A ${r} ${r} 0 0 ${limb} ${cx} ${cy + r} A ${rx} ${r} 0 0 ${terminator} ${cx} ${cy - r} Z`;
}

/** Draws the tool's structured content: {date, phase, illumination, ageDays, emoji}. */
function show(moon) {
  if (!moon || typeof moon.phase !== "string") return;
  const lit = Math.max(0, Math.min(100, Number(moon.illumination) || 0));
  const age = Number(moon.ageDays) || 0;
  $("phase").textContent = `${moon.emoji ?? ""} ${moon.phase}`.trim();
  $("date").textContent = moon.date ?? "";
  $("illumination").textContent = `${lit.toFixed(1)} %`;
  $("age").textContent = `${age.toFixed(1)} days`;
  $("lit").setAttribute("d", litPath(age, lit));
  $("disc").setAttribute("aria-label", `${moon.phase}, ${lit.toFixed(1)} % lit`);
  document.body.dataset.phase = moon.phase;
  shown = moon.date ?? null;
  $("previous").disabled = $("next").disabled = !shown;
}

/** `date` moved by `days`, as YYYY-MM-DD. */
function addDays(date, days) {
  const d = new Date(`${date}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function errorText(result) {
  return (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

const app = new App({ name: "moon", version: "0.1.0" });

app.ontoolinput = ({ arguments: args }) => {
  if (typeof args?.date === "string") $("date").textContent = args.date;
};
app.ontoolresult = (result) => {
  if (result.isError) $("error").textContent = errorText(result);
  else show(result.structuredContent);
};

async function step(days) {
  if (!shown) return;
  $("previous").disabled = $("next").disabled = true;
  $("error").textContent = "";
  try {
    const result = await app.callServerTool({
      name: "moon_refresh",
      arguments: { date: addDays(shown, days) },
    });
    if (result.isError) $("error").textContent = errorText(result);
    else show(result.structuredContent);
  } catch (e) {
    $("error").textContent = e instanceof Error ? e.message : String(e);
  } finally {
    $("previous").disabled = $("next").disabled = !shown;
  }
}
$("previous").addEventListener("click", () => step(-1));
$("next").addEventListener("click", () => step(1));

// ChatGPT's Apps SDK hands the same structured content over as `window.openai.toolOutput`.
function fromOpenAi() {
  if (window.openai?.toolOutput) show(window.openai.toolOutput);
}
window.addEventListener("openai:set_globals", fromOpenAi);
fromOpenAi();

app.connect().then(
  () => {
    document.body.dataset.connected = "true";
  },
  (e) => {
    $("error").textContent = `Not connected to a host: ${e instanceof Error ? e.message : e}`;
  },
);
