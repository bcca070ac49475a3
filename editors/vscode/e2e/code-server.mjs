// End-to-end test of the packaged extension in real VS Code (code-server),
// driven through headless Chromium with playwright-core. editors/vscode_e2e_test.go
// starts code-server with the .vsix installed and passes DSH_E2E_PARAMS:
//   { url, workspace, prompt, playwright, chromium, shots, sessionTitle, fileName }
// Every step waits for what a person would see, with a deadline, and takes a
// screenshot under `shots`. The last line printed is a JSON report.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const p = JSON.parse(process.env.DSH_E2E_PARAMS);
const require = createRequire(path.join(p.playwright, "noop.js"));
const { chromium } = require("playwright-core");

const STEP_MS = 60_000;
const report = { screenshots: [], timings: {}, checks: [] };
let page;

function check(ok, what) {
  report.checks.push({ ok: Boolean(ok), what });
  if (!ok) {
    throw new Error(`check failed: ${what}`);
  }
}

async function shot(name) {
  const file = path.join(p.shots, name);
  await page.screenshot({ path: file });
  report.screenshots.push(name);
}

/** Runs a command from the command palette. */
async function command(title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: STEP_MS });
  await input.fill(">" + title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: STEP_MS });
  await page.keyboard.press("Enter");
}

/** Opens a workspace file with Quick Open. */
async function quickOpen(name) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: STEP_MS });
  await input.fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: STEP_MS });
  await page.keyboard.press("Enter");
  await page.locator(".tabs-container .tab.active", { hasText: name }).first().waitFor({ timeout: STEP_MS });
}

/** Rows of the visible suggest widget, as their labels. */
async function suggestions() {
  return page.$$eval(".suggest-widget.visible .monaco-list-row .label-name", (els) => els.map((e) => e.textContent.trim()));
}

/**
 * Types text and measures, in the page, the time from the last keystroke to
 * the first frame whose suggest widget shows the answer to the whole text:
 * `label` (null: any item) as its first row and no row matching `absent`
 * (what the answer to a shorter prefix lists).
 */
async function typeAndTimeMenu(text, label, absent) {
  await page.evaluate(([label, absent]) => {
    const s = (window.__dshMenu = { key: 0, shown: 0 });
    const gone = absent ? new RegExp(absent) : null;
    document.addEventListener("keydown", () => { s.key = performance.now(); s.shown = 0; }, true);
    const poll = () => {
      const rows = [...document.querySelectorAll(".suggest-widget.visible .monaco-list-row .label-name")].map((e) => e.textContent.trim());
      if (s.key && !s.shown && rows.length > 0 && (label === null || rows[0] === label) && !(gone && rows.some((r) => gone.test(r)))) {
        s.shown = performance.now();
      }
      requestAnimationFrame(poll);
    };
    requestAnimationFrame(poll);
  }, [label, absent ?? null]);
  await page.keyboard.type(text, { delay: 40 });
  await page.waitForFunction(() => window.__dshMenu.shown > 0, null, { timeout: STEP_MS });
  return page.evaluate(() => Math.round(window.__dshMenu.shown - window.__dshMenu.key));
}

async function main() {
  const browser = await chromium.launch({
    executablePath: p.chromium,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    page = await browser.newPage({ viewport: { width: 1400, height: 850 } });
    await page.goto(`${p.url}/?folder=${encodeURIComponent(p.workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: STEP_MS });
    await page.locator(".explorer-folders-view").waitFor({ timeout: STEP_MS });

    // Open the prompt with Quick Open, go to its end.
    await quickOpen(path.basename(p.prompt));
    const editor = page.locator(".editor-instance .monaco-editor .view-lines").first();
    await editor.waitFor({ timeout: STEP_MS });
    await editor.click();
    await page.keyboard.press("Control+End");

    // Warm-up: the extension activates and the server indexes; the first
    // "@" that lists the session says both are ready.
    await page.keyboard.type(" @");
    await page.waitForFunction((t) => [...document.querySelectorAll(".suggest-widget.visible .label-name")]
      .some((e) => e.textContent.trim() === t), p.sessionTitle, { timeout: 90_000 }).catch(async (e) => {
      await shot("00-no-menu.png");
      throw e;
    });
    await page.keyboard.press("Escape");
    await page.keyboard.press("Backspace");

    // "@": the menu with sessions and files, timed.
    await page.waitForFunction(() => !document.querySelector(".suggest-widget.visible"), null, { timeout: STEP_MS });
    report.timings.atMenuMs = await typeAndTimeMenu("@", null);
    await shot("01-at-menu.png");
    const atRows = await suggestions();
    check(atRows.length > 3, `@ lists sessions and files: ${JSON.stringify(atRows)}`);

    // "@rate": narrowed by the server, session first, the nested file listed.
    // "@rat" still lists "Migration plan…" (it holds "rat"); "@rate" does not.
    report.timings.rateMenuMs = await typeAndTimeMenu("rate", p.sessionTitle, "^Migration plan");
    await page.locator(".suggest-widget.visible .label-name", { hasText: p.fileName }).first().waitFor({ timeout: STEP_MS });
    await shot("02-rate-menu.png");
    const rateRows = await suggestions();
    check(rateRows[0] === p.sessionTitle, `@rate lists ${p.sessionTitle} first: ${JSON.stringify(rateRows)}`);
    check(rateRows.includes(p.fileName), `@rate lists ${p.fileName}: ${JSON.stringify(rateRows)}`);
    check(!rateRows.some((r) => /^Migration plan/.test(r)), `@rate shows no fuzzy noise: ${JSON.stringify(rateRows)}`);
    report.rateRows = rateRows;

    // Accept the session, then a file.
    await page.keyboard.press("Enter");
    await page.keyboard.type(" and @rate", { delay: 40 });
    await page.waitForFunction(([s, f]) => {
      const rows = [...document.querySelectorAll(".suggest-widget.visible .monaco-list-row .label-name")].map((e) => e.textContent.trim());
      return rows[0] === s && rows.includes(f);
    }, [p.sessionTitle, p.fileName], { timeout: STEP_MS });
    // Down to the file with the keyboard, as a person would; a click can
    // land while the list is being replaced by the next answer.
    for (let i = 0; ; i++) {
      const focused = await page.$eval(".suggest-widget.visible .monaco-list-row.focused .label-name", (e) => e.textContent.trim()).catch(() => "");
      if (focused === p.fileName) {
        break;
      }
      check(i < 10, `the file ${p.fileName} can be reached with the arrow keys (focused: ${focused})`);
      await page.keyboard.press("ArrowDown");
    }
    await page.keyboard.press("Enter");
    await page.keyboard.type(" please. See @nope.md for more.", { delay: 20 });
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+S");
    // Saved means on disk: wait for the file to end as typed.
    let saved = "";
    for (const deadline = Date.now() + STEP_MS; ; ) {
      saved = fs.readFileSync(p.prompt, "utf8");
      if (saved.endsWith("for more.") || Date.now() > deadline) {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await shot("03-accepted.png");
    check(saved.includes(`@[${p.sessionTitle}](dsh-session:`), `the session mention was inserted: ${saved}`);
    check(saved.includes(`@"${p.fileName}"`), `the file mention was inserted: ${saved}`);

    // Hover on the mention.
    const mentionText = page.locator(".editor-instance .view-lines span", { hasText: p.sessionTitle }).first();
    await mentionText.hover();
    const hover = page.locator(".monaco-hover:not(.hidden) .hover-contents", { hasText: "messages kept" }).first();
    await hover.waitFor({ timeout: STEP_MS });
    await shot("04-hover.png");
    const hoverText = await hover.innerText();
    check(!/originalMessages|capturedThroughSeq/.test(hoverText), `hover has no raw field names: ${hoverText}`);
    await page.mouse.move(5, 5);

    // Problems: the missing file only, never the views opened below.
    await page.keyboard.press("Control+Shift+M");
    const markers = page.locator(".markers-panel");
    await markers.locator(".monaco-list-row", { hasText: "nope.md" }).first().waitFor({ timeout: STEP_MS });
    await shot("05-problems.png");

    // Prepare Message: read-only views, not untitled documents.
    await editor.click();
    await command("DSH: Prepare Message");
    const prepared = page.locator(".tabs-container .tab", { hasText: "Prepared message.md" }).first();
    await prepared.waitFor({ timeout: STEP_MS });
    await page.locator(".tabs-container .tab", { hasText: "Referenced sessions.md" }).first().waitFor({ timeout: STEP_MS });
    await page.locator(".editor-instance .view-lines", { hasText: "referenced-sessions" }).first().waitFor({ timeout: STEP_MS });
    await shot("06-prepare.png");
    const untitled = await page.locator(".tabs-container .tab", { hasText: "Untitled" }).count();
    check(untitled === 0, "Prepare Message opens no Untitled document");
    const markerText = await markers.innerText().catch(() => "");
    check(!/Prepared message|Referenced sessions/.test(markerText), `no problems reported for the views: ${markerText}`);
    // A view cannot be edited: typing changes nothing and marks nothing dirty.
    await page.locator(".editor-instance .view-lines", { hasText: "referenced-sessions" }).first().click();
    await page.keyboard.type("x");
    check((await page.locator(".tabs-container .tab.dirty").count()) === 0, "views are read-only and never dirty");

    // Ctrl+click on the mention opens the session's recall preview; the
    // prompt alone in a wide editor, so that the title is on one line.
    await command("View: Close All Editors");
    await page.waitForFunction(() => document.querySelectorAll(".tabs-container .tab").length === 0, null, { timeout: STEP_MS });
    await quickOpen(path.basename(p.prompt));
    const link = page.locator(".editor-instance .view-lines span", { hasText: p.sessionTitle }).first();
    await link.waitFor({ timeout: STEP_MS });
    await link.click({ modifiers: ["Control"] });
    const preview = page.locator(".tabs-container .tab", { hasText: `${p.sessionTitle}.md` }).first();
    await preview.waitFor({ timeout: STEP_MS });
    await page.locator(".editor-instance .view-lines", { hasText: "messages kept" }).first().waitFor({ timeout: STEP_MS });
    await shot("07-ctrl-click.png");
  } finally {
    await browser.close();
  }
}

main().then(
  () => {
    report.ok = true;
    console.log(JSON.stringify(report));
  },
  async (err) => {
    report.ok = false;
    report.error = String(err && err.stack ? err.stack : err);
    try {
      if (page) await shot("99-failure.png");
    } catch {}
    console.log(JSON.stringify(report));
    process.exit(1);
  },
);
