/* A library for the attach tests to load into a running attach_target: proves that the call ran
 * inside the target (it writes the target's pid to the file it is given) and returns a value the
 * test can check. */
#include <stdio.h>
#include <unistd.h>

__attribute__((visibility("default"))) int probe_write_pid(const char* path) {
  FILE* f = fopen(path, "w");
  if (f == NULL) return -1;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  return 4242;
}
