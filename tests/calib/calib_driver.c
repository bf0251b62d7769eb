/* calib_driver: runs `calibrate` alone (calibrate_main) so the command-line
 * tests do not depend on the rest of stallsim being built. */
#include "calibrate.h"

int main(int argc, char **argv) {
    argv[0] = "calibrate";
    return calibrate_main(argc, argv);
}
