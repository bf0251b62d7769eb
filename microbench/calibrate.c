#include "calibrate.h"
#include <stdio.h>
int calibrate_main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "stallsim calibrate: not built yet\n");
    return 1;
}
