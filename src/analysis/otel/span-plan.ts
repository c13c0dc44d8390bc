/**
 * The vocabulary of an exported trace, free of the OpenTelemetry SDK: a run is planned as plain
 * span descriptions (this file's types), and only the exporter turns them into SDK spans. So the
 * mapping from records to the GenAI conventions is testable without a collector, and commands that
 * never export load none of the SDK.
 */

import type { RequestRecord } from "../../capture/types.js";
import type { RequestCacheRate } from "../cost/cache-rates.js";

/** Attribute values as OTLP carries them (no nested maps: structured content travels as JSON text). */
export type AttributeValue = string | number | boolean | string[] | number[];

export type Attributes = Record<string, AttributeValue>;

/** What a span may say about content (`--content`): sizes only, sizes and sha256 hashes, or the texts too. */
export type ContentMode = "none" | "hashes" | "full";

export const CONTENT_MODES: readonly ContentMode[] = ["none", "hashes", "full"];

export interface SpanPlan {
  /** Unique within one run's plan; children name their parent by it. */
  id: string;
  /** The parent's id; null for the run's `invoke_agent` span. */
  parent: string | null;
  name: string;
  /** CLIENT for calls that leave the agent (a provider request, an MCP request), INTERNAL otherwise. */
  kind: "client" | "internal";
  /** Epoch milliseconds (fractional) taken from the run's records and logs, never from the export's clock. */
  startMs: number;
  endMs: number;
  attributes: Attributes;
  /**
   * Attributes made when the span is sent, not planned: a request's texts (`--content full`), so a
   * long run's plan never holds every body's texts at once.
   */
  lateAttributes?: () => Attributes;
  /** Set when the operation failed: the span's status is ERROR and `error.type` says this. */
  errorType?: string;
}

/**
 * A price function for the seam the cost model fills: the predicted cost of one request in US
 * dollars, or undefined when the pricing table does not know the model. The attribute it fills is
 * left out without one.
 */
export type PriceFunction = (record: RequestRecord) => number | undefined;

export interface PlanOptions {
  content: ContentMode;
  price?: PriceFunction;
  /** Each request's prompt-cache figures (cost/cache-rates.ts), when the cost model ran. */
  cacheRate?: (record: RequestRecord) => RequestCacheRate | undefined;
}
