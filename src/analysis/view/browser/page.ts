/**
 * The saved page's script (src/analysis/view/view-page.ts inlines its bundle): draws from the data
 * embedded in the page. It runs between the request index and the items, so the timeline is drawn
 * while the browser is still reading the items (src/analysis/view/view-data.ts).
 */
import { drawPage } from "./draw-page.js";

drawPage();
