package explain

// pageCSS is the page's style sheet: system fonts, the three axis kinds'
// colours (chips, rows, legend and graph agree), a dark variant, and
// :target highlighting of source lines, tensors and operations. The
// tables and operation sections have content-visibility:auto, so that a
// browser lays out only what is on screen: headless chromium loaded the
// 12-block decoder's 4.9 MB page in 2.9-3.3 s with it, 5.4-6.8 s
// without (2026-11-29, Zen 5, alternating).
const pageCSS = `:root{
--fg:#1b1f24;--muted:#5b6470;--bg:#fff;--panel:#f6f8fa;--line:#d8dee4;--accent:#0b62d6;--accent-bg:#e7f0ff;
--b:#6b3fc4;--b-bg:#efe9fc;--i:#0a7285;--i-bg:#dff4f7;--o:#b4470f;--o-bg:#fdeadd;
--bad:#b3261e;--bad-bg:#fde7e6;--hl:#fff3b0;
--sans:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;
--mono:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace}
@media (prefers-color-scheme:dark){:root{
--fg:#e6e9ed;--muted:#9aa4b1;--bg:#0f1216;--panel:#171b21;--line:#2c333c;--accent:#6ea8ff;--accent-bg:#16263f;
--b:#b79cff;--b-bg:#2a2140;--i:#5fd0e2;--i-bg:#10313a;--o:#ffa56b;--o-bg:#3a2416;
--bad:#ff8a80;--bad-bg:#3b1614;--hl:#4a4216}}
*{box-sizing:border-box}
html{color-scheme:light dark}
body{margin:0;font:15px/1.5 var(--sans);color:var(--fg);background:var(--bg)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre,.mono{font-family:var(--mono);font-size:.88em}
h1,h2,h3,h4,h5{line-height:1.25;margin:1.2em 0 .5em}
h1{font-size:1.6rem;margin:0 0 .3em}h2{font-size:1.35rem;border-bottom:1px solid var(--line);padding-bottom:.3em}
h3{font-size:1.15rem}h4{font-size:1rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
h5{font-size:.95rem;margin:0 0 .3em;font-weight:600}
.top{padding:1.4rem 2rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
.top .cmd{margin:.2em 0 .8em;color:var(--muted)}
.top .cmd code{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.15em .5em}
.wrap{display:flex;gap:2rem;align-items:flex-start;flex-wrap:wrap}
nav.toc{flex:1 1 18rem}nav.toc h2{font-size:1rem;border:0;margin:.2em 0;padding:0}
nav.toc ol{margin:.2em 0;padding-left:1.3em}
.legend{flex:0 1 26rem;border:1px solid var(--line);border-radius:8px;padding:.6em .9em;background:var(--bg);font-size:.9em}
.legend h2{font-size:1rem;border:0;margin:0 0 .3em;padding:0}
.legend p{margin:.3em 0}.legend .shape{display:inline-flex}
main{padding:0 2rem 3rem;max-width:110rem}
.unit{margin-top:1.5rem}
.meta{color:var(--muted);margin:.2em 0}
.note{color:var(--muted);font-style:italic}
.tag{display:inline-block;font-size:.75em;padding:0 .45em;border-radius:1em;border:1px solid var(--line);color:var(--muted);vertical-align:.1em;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%;content-visibility:auto;contain-intrinsic-size:auto 600px}
table{border-collapse:collapse;font-size:.9em;min-width:40rem}
th,td{border-bottom:1px solid var(--line);padding:.35em .6em;text-align:left;vertical-align:top}
thead th{background:var(--panel);position:sticky;top:0;z-index:1;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.tensor:target,section.op:target,tr.param:target{background:var(--hl)}
tr.tensor.hl{background:var(--accent-bg)}
tr.tensor>th{font-family:var(--mono);font-size:.95em;font-weight:600;white-space:nowrap}
tr.tensor>th small{font-family:var(--sans);font-weight:400;color:var(--muted);margin:0 .2em}
tr.tensor>th a{font-weight:400;font-size:.85em}
.anon,th.anon{color:var(--muted)}
.shape{display:flex;flex-wrap:wrap;align-items:center;gap:.3em;font-family:var(--mono);font-size:.85em}
.row{display:inline-flex;flex-wrap:wrap;gap:.25em;align-items:center;padding:.15em .3em;border-radius:6px;min-width:1.4em;justify-content:center}
.row.b{background:var(--b-bg)}.row.i{background:var(--i-bg)}.row.o{background:var(--o-bg)}
.shape{color:var(--muted)}.shape .ax,.shape .prov{color:var(--fg)}
.ax,summary.ax{display:inline-flex;gap:.3em;align-items:baseline;border:1px solid;border-radius:5px;padding:0 .35em;background:var(--bg);white-space:nowrap;cursor:pointer;list-style:none}
summary.ax::-webkit-details-marker{display:none}
.ax.b{border-color:var(--b)}.ax.i{border-color:var(--i)}.ax.o{border-color:var(--o)}
.ax>i{font-size:.75em;font-weight:700;font-style:normal;border-radius:3px;padding:0 .3em;color:#fff;align-self:center;line-height:1.35}
.ax.b>i{background:var(--b)}.ax.i>i{background:var(--i)}.ax.o>i{background:var(--o)}
@media (prefers-color-scheme:dark){.ax>i{color:#000}}
.ax>b{font-weight:600}
.ax>small{font-size:.75em;color:var(--muted)}
.ax.given{border-style:double;border-width:3px}
details.axd{display:inline-block}
details.axd[open]{display:block;flex-basis:100%;border-left:3px solid var(--line);padding-left:.4em;margin:.2em 0}
details.axd>summary:focus-visible,details.rowd>summary:focus-visible{outline:2px solid var(--accent)}
details.rowd{display:inline-block;font-family:var(--sans);font-size:.8em}
details.rowd>summary{cursor:pointer;color:var(--muted);list-style:none;border:1px dashed;border-radius:4px;padding:0 .3em;font-size:.9em}
details.rowd>summary::-webkit-details-marker{display:none}
details.rowd[open]{display:block;flex-basis:100%}
details>ol{margin:.2em 0 .3em;padding-left:1.6em;font-family:var(--sans);font-size:.92rem;white-space:normal;color:var(--fg)}
li.prov{margin:.1em 0}li.prov>b{font-family:var(--mono);font-size:.92em}li.prov:target{background:var(--hl)}
li.prov.ref,li.prov.elided{font-weight:400;color:var(--muted)}
li.prov.last>em{font-style:normal;font-weight:600;font-size:.85em;color:var(--accent);border:1px solid;border-radius:1em;padding:0 .45em;white-space:nowrap}
li.prov.last{font-weight:500}
td>.shape{min-width:15rem}
ul.sized{margin:0;padding-left:1.1em}
.given-note{font-family:var(--sans);font-size:.9em;color:var(--muted)}
.graphbox{border:1px solid var(--line);border-radius:8px;background:var(--panel);overflow:auto;max-height:85vh}
svg.graph{display:block;margin:0 auto;font-family:var(--sans)}
svg.graph .edge{fill:none;stroke:var(--muted);stroke-width:1.3;opacity:.75}
svg.graph .edge.hl{stroke:var(--accent);stroke-width:3;opacity:1}
svg.graph .elab{font:10.5px var(--mono);fill:var(--muted);paint-order:stroke;stroke:var(--panel);stroke-width:3px;stroke-linejoin:round}
svg.graph .node rect{fill:var(--bg);stroke:var(--fg);stroke-width:1.1}
svg.graph .node.leaf rect{fill:var(--i-bg);stroke:var(--i)}
svg.graph .node.sink rect{fill:var(--o-bg);stroke:var(--o)}
svg.graph .node text{font-size:12px;fill:var(--fg)}
svg.graph .node .sub{font-size:10.5px;fill:var(--muted);font-family:var(--mono)}
svg.graph a:hover rect,svg.graph a:focus rect{stroke:var(--accent);stroke-width:2.5}
svg.graph .node.hl rect{stroke:var(--accent);stroke-width:2.5}
section.op{border:1px solid var(--line);border-radius:8px;padding:.6em .9em;margin:.6em 0;background:var(--bg);content-visibility:auto;contain-intrinsic-size:auto 220px}
section.op h5 small{color:var(--muted);font-weight:400}
section.op .io{margin:.2em 0;font-family:var(--mono);font-size:.9em}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.4em 0;font-size:.95em}
dl.kv dt{color:var(--muted);grid-column:1}dl.kv dd{margin:0;grid-column:2;font-family:var(--mono);font-size:.92em}
dl.kv dd b{font-family:var(--sans)}
dl.prose dd{font-family:var(--sans);font-size:1em}
section.failure{border:2px solid var(--bad);background:var(--bad-bg);border-radius:10px;padding:.2em 1.2em 1em;margin:1em 0}
section.failure h3{color:var(--bad)}
pre.message{white-space:pre-wrap;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.6em .8em;font-weight:600}
.sides{display:grid;grid-template-columns:repeat(auto-fit,minmax(22rem,1fr));gap:1em}
.side{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:.4em .8em}
.side h4{margin:.4em 0}
.constraint{font-size:1.05em}
.src{border:1px solid var(--line);border-radius:8px;background:var(--panel);overflow-x:auto;padding:.4em 0;font-family:var(--mono);font-size:.85em;line-height:1.45}
.src .l{display:flex;white-space:pre;scroll-margin-top:30vh}
.src .l:target{background:var(--hl)}
.src .n{flex:0 0 4.5em;text-align:right;padding-right:1em;color:var(--muted);user-select:none}
.src .l code{font-size:1em;min-height:1.45em;padding-right:1em}
mark.failing{background:var(--bad-bg);color:inherit;outline:2px solid var(--bad);border-radius:3px}
mark.failing .at{text-decoration:underline wavy var(--bad);font-weight:700}
.src .l.related code{background:var(--accent-bg)}
figure.source{margin:1em 0}figure.source figcaption{font-weight:600;margin-bottom:.3em}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media print{.graphbox{max-height:none;overflow:visible}thead th{position:static}details.axd>ol{display:block}}
`

// pageScript is the page's only script, progressive enhancement: it
// marks that it ran and, on hover or focus of a tensor (a table row, a
// graph edge or a graph node), highlights every element of the same
// entry that carries that tensor; it opens the <details> around a
// link's target (a shared provenance tail). The page reads the same
// without it.
const pageScript = `(function(){
var b=document.body;b.dataset.script="ran";
var cur=null,on=[];
function clear(){for(var i=0;i<on.length;i++)on[i].classList.remove("hl");on=[];cur=null}
function show(el){
 var sec=el.closest("section.entry");if(!sec)return;
 var name=el.getAttribute("data-tensor"),key=sec.id+"\u0000"+name;
 if(key===cur)return;clear();cur=key;
 var all=sec.querySelectorAll("[data-tensor]");
 for(var i=0;i<all.length;i++){if(all[i].getAttribute("data-tensor")===name){all[i].classList.add("hl");on.push(all[i])}}
}
function over(e){var t=e.target;if(!t||!t.closest)return;var el=t.closest("[data-tensor]");if(el)show(el);else if(cur)clear()}
// Opens the <details> around a link's target (a shared provenance tail).
function reveal(){
 var id=location.hash.slice(1),el=null;if(!id)return;
 try{el=document.getElementById(decodeURIComponent(id))}catch(err){}
 if(!el)return;
 for(var d=el.parentElement;d;d=d.parentElement){if(d.tagName==="DETAILS")d.open=true}
 if(el.scrollIntoView)el.scrollIntoView({block:"center"});
}
try{document.addEventListener("mouseover",over);document.addEventListener("focusin",over);window.addEventListener("hashchange",reveal);reveal()}catch(err){}
})();`
