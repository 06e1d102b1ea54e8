/**
 * The page's scrolling, as browser JavaScript (page-view.ts's `view` and `render` use it, in the same script): following
 * a running run's end, and not while the person reads further up.
 */
export const pageScrollScript = String.raw`
/** At the timeline's end, give or take a pixel (a fraction of one when zoomed). */
function atEnd(main) { return main.scrollTop + main.clientHeight >= main.scrollHeight - 2; }

/**
 * The page follows a run's end (view.follow: new items keep it in view, and the page lets go of old ones) until the
 * person scrolls up; scrolled up, they read: nothing is let go of until they scroll back to the end (the item they read
 * went from under them as the run went on, and new items did not show without scrolling). Only the person's own
 * scrolling up stops the following: the page's scrolling, and the browser's as items' sizes become known, move the
 * view too. Back at the end (and not just scrolling up from it, as a smooth scroll's first steps are), it follows again.
 */
function watchScrolling() {
  var main = document.getElementById('run');
  var held = false;
  function up() { view.follow = false; view.upAt = Date.now(); }
  main.addEventListener('wheel', function (event) { if (event.deltaY < 0) up(); }, { passive: true });
  document.addEventListener('keydown', function (event) { if (/^(ArrowUp|PageUp|Home)$/.test(event.key) || (event.key === ' ' && event.shiftKey)) up(); });
  // The scroll bar dragged, or a finger: where the view is taken says.
  main.addEventListener('pointerdown', function () { held = true; });
  window.addEventListener('pointerup', function () { held = false; });
  main.addEventListener('touchstart', function () { held = true; }, { passive: true });
  window.addEventListener('touchend', function () { held = false; });
  main.addEventListener('scroll', function () { if (held && !atEnd(main)) up(); }, { passive: true });
}
function resumeFollowing(main) {
  if (!view.follow && Date.now() - view.upAt > 500 && atEnd(main)) view.follow = true;
}
`;
