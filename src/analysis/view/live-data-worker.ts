/**
 * The live view's worker thread (started by live-view.ts, bundled by scripts/bundle.mjs):
 * builds the run's data for data.json one request at a time, so a long run is read and taken apart
 * here while the command's main thread goes on relaying. The token cache is read once and kept.
 */
import { parentPort } from "node:worker_threads";
import { defaultTokenCachePath, TokenCountCache } from "../../capture/token-count-cache.js";
import { buildLiveData, type LiveDataReply, type LiveDataRequest } from "./live-data.js";

const tokens = new TokenCountCache(defaultTokenCachePath());
let queue = Promise.resolve();

async function answer(request: LiveDataRequest): Promise<void> {
  try {
    // A copy of its own (not Node's buffer pool), so the transfer detaches nothing else.
    const data = new Uint8Array(await buildLiveData(request, tokens)).buffer;
    parentPort!.postMessage({ id: request.id, data } satisfies LiveDataReply, [data]);
  } catch (error) {
    const { name, message, stack } = error as Error;
    parentPort!.postMessage({ id: request.id, error: { name, message, stack } } satisfies LiveDataReply);
  }
}

parentPort!.on("message", (request: LiveDataRequest) => {
  queue = queue.then(() => answer(request));
});
