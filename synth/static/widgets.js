// skill widgets: filled in per skill below
(() => { "use strict"; })();
