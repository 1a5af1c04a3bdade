// Integrity paradata, never required: with script, each study page counts what a person
// did with it while it was open (pastes and the characters pasted, the window losing
// focus, the page hidden and for how long, the time to the first keystroke) and sends the
// counts with the page's form, in a hidden field the server reads and never requires.
// Without script nothing is sent and the study runs the same.
(function () {
  var start = performance.now(), hiddenAt = null;
  var p = {paste: 0, pasted_chars: 0, blur: 0, hidden: 0, hidden_ms: 0, first_key_ms: null,
           open_ms: 0};
  document.addEventListener("paste", function (e) {
    p.paste += 1;
    var text = e.clipboardData ? e.clipboardData.getData("text") : "";
    p.pasted_chars += text.length;
  }, true);
  window.addEventListener("blur", function () { p.blur += 1; });
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { p.hidden += 1; hiddenAt = performance.now(); }
    else if (hiddenAt !== null) { p.hidden_ms += performance.now() - hiddenAt; hiddenAt = null; }
  });
  document.addEventListener("keydown", function () {
    if (p.first_key_ms === null) p.first_key_ms = Math.round(performance.now() - start);
  }, true);
  document.addEventListener("submit", function (e) {
    p.open_ms = Math.round(performance.now() - start);
    p.hidden_ms = Math.round(p.hidden_ms);
    var field = e.target.querySelector("input[name=paradata]");
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden"; field.name = "paradata";
      e.target.appendChild(field);
    }
    field.value = JSON.stringify(p);
  }, true);
})();
