// @ts-nocheck — browser code in a project typed for Node (no DOM lib), as view-page-script.ts is.

/**
 * The live view's script (src/cli/live-view.ts serves it): listens to the server's events and, on
 * each `changed`, fetches the run's data again and redraws with the `view` page's own drawing
 * function (`draw`), handing it the state of the previous drawing. The server sends `changed` as
 * soon as the page connects, so the first data come the same way as every later copy. `end` says
 * the recording stopped: the page keeps what it shows, and stops listening.
 */
function liveView(draw) {
  const status = document.createElement("span");
  status.id = "live";
  status.className = "live";
  let view = null;
  let loading = false;
  let again = false;
  let ended = false;
  let endedText = "";

  const show = (text) => {
    status.textContent = text;
    document.querySelector("header").append(status);
  };

  /** One fetch at a time; a change told meanwhile fetches once more when it is done. */
  async function load() {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    try {
      do {
        again = false;
        const response = await fetch("data.json", { cache: "no-store" });
        if (!response.ok) throw new Error(await response.text());
        const text = await response.text();
        // data.json is `[<index>\n,\n<items>]`: that separator occurs nowhere else (view-data.ts's layout).
        const at = text.indexOf("\n,\n");
        view = draw({ index: text.slice(1, at), items: text.slice(at + 3, -1), state: view?.state() });
        show(ended ? endedText : "live: updates as requests arrive");
      } while (again);
    } catch (error) {
      show(`live view: ${error.message}`);
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
}

/** The script of the live page: the live loop around the view page's drawing function. */
export function liveScript(drawSource: string): string {
  return `(${liveView.toString()})(${drawSource});`;
}
