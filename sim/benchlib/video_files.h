/* video_files: the video files of a folder, for calibrate's --videos: the
 * regular files named *.mp4, *.mkv, *.webm, *.avi, *.mov or *.m4v (any
 * case) directly in it (not searched recursively), in name order, at most
 * `max` of them (the first by name).
 *
 * Use: video_files v; if (video_files_scan(dir, 8, &v, err, n) == 0) use v.path[0..v.n);
 *      video_files_free(&v);
 */
#ifndef STALLSIM_VIDEO_FILES_H
#define STALLSIM_VIDEO_FILES_H

#include <stddef.h>

typedef struct {
    char **path; /* dir/name, malloc'd */
    int n;       /* kept: at most max */
    int found;   /* video files in the folder */
} video_files;

/* 0, or -1 with the reason in err: the folder cannot be read, or holds no
 * video file. */
int video_files_scan(const char *dir, int max, video_files *out, char *err, size_t errlen);
void video_files_free(video_files *v);

#endif
