// Live updates: an element with data-live streams its items from the
// console (server-sent events, one rendered item per change) and swaps
// them in: the overview's cluster rows ("cluster" events), the rollouts
// page's runs ("run" events).
"use strict";
function html(markup) {
  var tmp = document.createElement("template");
  tmp.innerHTML = markup.trim();
  return tmp.content.firstElementChild;
}
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-live]:not(table)").forEach(function (box) {
    var source = new EventSource(box.dataset.live);
    source.addEventListener("reload", function () { source.close(); window.location.reload(); });
    source.addEventListener("run", function (e) {
      var msg = JSON.parse(e.data);
      var section = box.querySelector('section[data-run="' + CSS.escape(msg.name) + '"]');
      if (msg.deleted) {
        if (section) { section.remove(); }
      } else if (section) {
        // A button the user is on keeps the focus across the swap.
        var active = section.contains(document.activeElement) ? document.activeElement.className : "";
        var fresh = html(msg.html);
        section.replaceWith(fresh);
        var again = active && fresh.querySelector("button." + CSS.escape(active));
        if (again) { again.focus(); }
      } else {
        var none = box.querySelector(".none");
        if (none) { none.remove(); }
        box.appendChild(html(msg.html));
      }
      document.body.dataset.lastUpdate = String(Date.now());
    });
  });
  document.querySelectorAll("table[data-live]").forEach(function (table) {
    var source = new EventSource(table.dataset.live);
    // The list the page holds is too old to watch from: list again.
    source.addEventListener("reload", function () { source.close(); window.location.reload(); });
    source.addEventListener("workload", function (e) {
      var msg = JSON.parse(e.data);
      var body = table.tBodies[0];
      var row = body.querySelector('tr[data-workload="' + CSS.escape(msg.name) + '"]');
      if (msg.deleted) {
        if (row) { row.remove(); }
      } else if (row) {
        row.replaceWith(html("<table><tbody>" + msg.html + "</tbody></table>").tBodies[0].firstElementChild);
      } else if (new URLSearchParams(table.dataset.live.split("?")[1]).get("last") === "1") {
        // A new workload joins the last page.
        var none = body.querySelector("tr.none");
        if (none) { none.remove(); }
        body.appendChild(html("<table><tbody>" + msg.html + "</tbody></table>").tBodies[0].firstElementChild);
      }
      document.body.dataset.lastUpdate = String(Date.now());
    });
    source.addEventListener("cluster", function (e) {
      var msg = JSON.parse(e.data);
      var body = table.tBodies[0];
      var row = body.querySelector('tr[data-cluster="' + CSS.escape(msg.name) + '"]');
      var tile = document.querySelector('.tile[data-cluster="' + CSS.escape(msg.name) + '"]');
      if (msg.deleted) {
        if (row) { row.remove(); }
        if (tile) { tile.remove(); }
        return;
      }
      var tmp = document.createElement("tbody");
      tmp.innerHTML = msg.html;
      var fresh = tmp.firstElementChild;
      if (row) { row.replaceWith(fresh); } else { body.appendChild(fresh); }
      if (tile) {
        tile.className = "tile " + fresh.className;
        tile.querySelector(".visually-hidden").textContent = " Ready " + fresh.querySelector(".state").textContent.trim();
      }
      document.body.dataset.lastUpdate = String(Date.now());
    });
  });
});
