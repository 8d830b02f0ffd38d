/* The heap policy of the Bigtable tools. */
#ifndef TFREC_TOOLS_HEAP_H
#define TFREC_TOOLS_HEAP_H

/* Keep freed memory instead of giving the top of the heap back to the
 * kernel after every row (call first thing in main). */
void cli_keep_heap(void);

#endif
