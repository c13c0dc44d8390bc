/**
 * The live page's script (src/analysis/view/live-view.ts serves it): listens to the server's events and, on
 * each `changed`, fetches the run's data again and draws the page with it, handing over the state
 * of the previous drawing. The server sends `changed` as soon as the page connects, so the first
 * data come the same way as every later copy. `end` says the recording stopped: the page keeps
 * what it shows, and stops listening.
 */
import { pageElement } from "./dom.js";
import { type DrawnPage, drawPage } from "./draw-page.js";

const status = document.createElement("span");
status.id = "live";
status.className = "live";
let view: DrawnPage | null = null;
let loading = false;
let again = false;
let ended = false;
let endedText = "";

/** The status line, at the header's end (each drawing makes the header afresh). */
function show(text: string): void {
  status.textContent = text;
  pageElement("header").append(status);
}

/** The two documents of `data.json`, `[<index>\n,\n<items>]`: that separator occurs nowhere else (view-data.ts's layout). */
async function fetchData(): Promise<{ index: string; items: string }> {
  const response = await fetch("data.json", { cache: "no-store" });
  if (!response.ok) throw new Error(await response.text());
  const text = await response.text();
  const at = text.indexOf("\n,\n");
  return { index: text.slice(1, at), items: text.slice(at + 3, -1) };
}

/** One fetch at a time; a change told meanwhile fetches once more when it is done. */
async function load(): Promise<void> {
  if (loading) {
    again = true;
    return;
  }
  loading = true;
  try {
    do {
      again = false;
      view = drawPage({ ...(await fetchData()), state: view?.state() });
      show(ended ? endedText : "live: updates as requests arrive");
    } while (again);
  } catch (error) {
    show(`live view: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    loading = false;
  }
}

const events = new EventSource("events");
events.addEventListener("changed", load);
events.addEventListener("end", (event) => {
  events.close();
  ended = true;
  endedText = `recording ended: ${event.data}`;
  document.body.dataset.ended = "1";
  show(endedText);
});
events.onerror = () => {
  if (!ended) show("live view: connection lost, retrying …");
};
