/* Filters for the report's tables; no network, no libraries. Sets body[data-ready="1"] when done. */
(function () {
  "use strict";
  function groupState(group) {
    var controls = document.querySelector('.filters[data-group="' + group + '"]');
    var items = Array.prototype.slice.call(document.querySelectorAll('[data-group="' + group + '"] .item'));
    return { controls: controls, items: items };
  }
  function apply(group) {
    var state = groupState(group);
    var active = state.controls.getAttribute("data-active") || "all";
    var search = state.controls.querySelector("input[type=search]");
    var query = search ? search.value.trim().toLowerCase() : "";
    var shown = 0;
    state.items.forEach(function (item) {
      var flags = (item.getAttribute("data-flags") || "").split(" ");
      var visible = (active === "all" || flags.indexOf(active) >= 0) &&
        (!query || item.textContent.toLowerCase().indexOf(query) >= 0);
      item.hidden = !visible;
      if (visible) { shown += 1; }
    });
    var counter = state.controls.querySelector(".shown");
    if (counter) { counter.textContent = shown + " of " + state.items.length + " shown"; }
    return shown;
  }
  function select(group, filter) {
    var controls = groupState(group).controls;
    controls.setAttribute("data-active", filter);
    controls.querySelectorAll("button[data-filter]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === filter));
    });
    return apply(group);
  }
  var groups = [];
  document.querySelectorAll(".filters[data-group]").forEach(function (controls) {
    var group = controls.getAttribute("data-group");
    groups.push(group);
    controls.querySelectorAll("button[data-filter]").forEach(function (button) {
      button.addEventListener("click", function () { select(group, button.getAttribute("data-filter")); });
    });
    var search = controls.querySelector("input[type=search]");
    if (search) { search.addEventListener("input", function () { apply(group); }); }
    apply(group);
  });
  // Self-test for headless browsers: open the page with #selftest to record each filter's row count.
  if (window.location.hash === "#selftest") {
    var result = {};
    groups.forEach(function (group) {
      result[group] = {};
      groupState(group).controls.querySelectorAll("button[data-filter]").forEach(function (button) {
        var filter = button.getAttribute("data-filter");
        result[group][filter] = select(group, filter);
      });
      select(group, "all");
    });
    document.body.setAttribute("data-selftest", JSON.stringify(result));
  }
  document.body.setAttribute("data-figures", String(document.querySelectorAll("figure svg").length));
  document.body.setAttribute("data-ready", "1");
})();
