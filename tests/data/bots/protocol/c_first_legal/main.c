/* A well-behaved compiled bot: answers hello with ready, and each request with its first legal
 * action. It finds the action in the request line without a JSON library: the first string of
 * the "actions" array. Build: cc -O2 -o bot main.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    size_t size = 1 << 20;
    char *line = malloc(size);
    if (line == NULL) return 2;
    while (fgets(line, (int)size, stdin) != NULL) {
        if (strstr(line, "\"type\":\"hello\"") != NULL) {
            printf("{\"type\":\"ready\",\"name\":\"c_first_legal\",\"version\":\"1\"}\n");
        } else if (strstr(line, "\"type\":\"request\"") != NULL) {
            char *start = strstr(line, "\"actions\":[\"");
            if (start == NULL) return 3;
            start += strlen("\"actions\":[\"");
            char *end = strchr(start, '"');
            if (end == NULL) return 4;
            *end = '\0';
            printf("{\"type\":\"action\",\"action\":\"%s\"}\n", start);
        } else if (strstr(line, "\"type\":\"end\"") != NULL) {
            break;
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
