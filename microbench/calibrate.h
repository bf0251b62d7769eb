/* calibrate: the `stallsim calibrate` command (placeholder header). */
#ifndef STALLSIM_CALIBRATE_H
#define STALLSIM_CALIBRATE_H
int calibrate_main(int argc, char **argv);
#endif
