/** The `view` page's stylesheet, inlined into the page (no external fonts or styles: it must work offline). */
export const PAGE_STYLE = `
:root { --tools: #4e79a7; --system: #f28e2b; --system2: #d4a373; --messages: #59a14f; --row: 26px;
  font: 13px/1.4 system-ui, sans-serif; color: #1d1d1f; background: #fafafa; }
* { box-sizing: border-box; }
body { margin: 0; height: 100vh; display: flex; flex-direction: column; }
header { padding: 8px 12px; border-bottom: 1px solid #ddd; background: #fff; display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: center; }
header h1 { font-size: 15px; margin: 0; }
.legend { display: flex; gap: 10px; align-items: center; color: #555; }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -2px; margin-right: 3px; }
.sw.tools { background: var(--tools); } .sw.system { background: var(--system); } .sw.messages { background: var(--messages); }
.sw.hatched { background: repeating-linear-gradient(45deg, #999 0 2px, #fff 2px 5px); }
#context-chart { padding: 4px 12px 6px; border-bottom: 1px solid #ddd; background: #fff; }
.ctx-title { font-size: 12px; color: #555; }
.ctx-chart { display: flex; align-items: flex-end; gap: 1px; height: 48px; }
.ctx-col { flex: 1 1 0; min-width: 0; max-width: 24px; display: flex; flex-direction: column-reverse; cursor: pointer; }
.ctx-col:hover { outline: 1px solid #333; } .ctx-col.sel { outline: 2px solid #1f5fa8; }
.ctx-legend { flex-wrap: wrap; font-size: 12px; gap: 2px 10px; }
main { flex: 1; display: flex; min-height: 0; }
#timeline { flex: 0 0 clamp(240px, 30%, 420px); overflow-y: auto; overflow-x: hidden; position: relative; border-right: 1px solid #ddd; }
#detail { flex: 1; min-width: 0; overflow-y: auto; overflow-x: hidden; padding: 10px 14px; background: #fff; }
.spacer { position: relative; }
.row { position: absolute; left: 0; right: 0; height: var(--row); display: flex; align-items: center; gap: 6px; padding: 0 8px; cursor: pointer; white-space: nowrap; }
.row:hover { background: #eef3fb; } .row.sel { background: #dce8fa; }
.row > *, .side > * { flex-shrink: 0; }
.row .seq { width: 40px; text-align: right; font-variant-numeric: tabular-nums; color: #555; }
.row.apart .seq { color: #8a5cc2; }
.row.group { background: #f1f1f4; border-top: 1px solid #e2e2e8; gap: 6px; font-size: 12px; overflow: hidden; }
.row.group .conv { font-weight: 600; } .row.group .fold { width: 12px; color: #666; }
.row.group.subagent .role { color: #6a3fa0; } .row.group.side .role { color: #8a4b00; }
.row.group .num { margin-left: auto; }
.row { overflow: hidden; }
.kind { font-size: 11px; padding: 0 5px; border-radius: 8px; background: #ece4f7; color: #6a3fa0; }
.track { position: relative; flex: 0 0 auto; height: 14px; }
.bar { position: absolute; left: 0; top: 0; height: 14px; display: flex; border-radius: 2px; overflow: hidden; }
.bar > span { height: 100%; }
.bar .tools { background: var(--tools); } .bar .system { background: var(--system); } .bar .system.p1 { background: var(--system2); }
.bar .messages { background: var(--messages); }
.after { position: absolute; top: 0; height: 14px; background: repeating-linear-gradient(45deg, rgba(255,255,255,.75) 0 2px, rgba(255,255,255,.1) 2px 5px); border-left: 2px solid #c00; }
.num { font-variant-numeric: tabular-nums; color: #444; min-width: 64px; text-align: right; }
.row > .badge, .side > .badge { flex-shrink: 1; min-width: 28px; overflow: hidden; text-overflow: ellipsis; }
.side > .kind { flex-shrink: 1; min-width: 12px; overflow: hidden; text-overflow: ellipsis; }
.badge { font-size: 11px; padding: 0 5px; border-radius: 8px; background: #eee; }
.badge.tc { background: #fde2b8; color: #8a4b00; font-weight: 600; }
.badge.mk { background: #d9f0d3; color: #236b1c; }
.badge.brk { background: #fbd3d3; color: #9b1c1c; }
.pair { display: flex; gap: 8px; flex: 1; min-width: 0; }
.pair > .side { flex: 1 1 0; min-width: 0; display: flex; gap: 6px; align-items: center; overflow: hidden; }
.pair .seq { width: 30px; } .pair .num { min-width: 0; } .row > .seq.eq { width: 14px; } body.diff #timeline { flex-basis: clamp(300px, 38%, 560px); }
.row.differs .seq { color: #9b1c1c; font-weight: 600; }
h2 { font-size: 15px; margin: 4px 0 6px; } h3 { font-size: 13px; margin: 12px 0 4px; }
.facts { color: #444; margin: 2px 0; overflow-wrap: anywhere; }
table.small { border-collapse: collapse; margin: 6px 0; font-size: 12px; font-variant-numeric: tabular-nums; }
table.small th, table.small td { border: 1px solid #e3e3e3; padding: 1px 8px; text-align: left; vertical-align: top; }
table.small th { background: #f6f6f6; font-weight: 600; } table.small td.n { text-align: right; }
.fields table.small { width: 100%; table-layout: fixed; } .fields td { overflow-wrap: anywhere; font-family: ui-monospace, monospace; }
.next-change { display: flex; gap: 6px; align-items: center; }
pre.reply { margin: 8px 0; border: 1px solid #e3e3e3; border-radius: 4px; background: #f8faf6; }
details { margin: 3px 0; border: 1px solid #e3e3e3; border-radius: 4px; }
summary { padding: 3px 6px; cursor: pointer; background: #f6f6f6; }
summary .num { margin-left: 6px; }
pre { margin: 0; padding: 4px 8px; font: 12px/1.45 ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
.ln { min-height: 1.45em; } .ln.toolline { background: #e3ecf7; } .ln.skills { background: #fff3d6; } .ln.skillbody { background: #fdebd0; }
mark.marker { background: #b7e4a8; outline: 1px solid #59a14f; }
.brkline { border-top: 2px dashed #c00; color: #c00; font-size: 12px; margin: 8px 0 4px; padding-top: 2px; }
.role { font-weight: 600; } .role.user { color: #1f5fa8; } .role.assistant { color: #2e7d32; } .role.tool { color: #8a4b00; }
.hl { outline: 2px solid #59a14f; }
.cols { display: flex; gap: 8px; } .cols > div { flex: 1; min-width: 0; }
.d-add { background: #dcf5dc; } .d-del { background: #fadcdc; } .d-pad { background: #f3f3f3; }
button { font: inherit; }
.muted { color: #777; }
#live { margin-left: auto; color: #236b1c; }
`;
