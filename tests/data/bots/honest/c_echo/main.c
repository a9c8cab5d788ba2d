/* An honest compiled bot: reads its own file, then echoes every line it is sent.
   The tests compile it into a temporary folder as ./echo (the command in bot.toml). */
#include <stdio.h>
#include <string.h>

int main(void) {
    char data[256] = "";
    FILE *f = fopen("data.txt", "r");
    if (f == NULL || fgets(data, sizeof data, f) == NULL) {
        return 3;
    }
    fclose(f);
    data[strcspn(data, "\n")] = '\0';
    printf("{\"ready\": true, \"data\": \"%s\"}\n", data);
    fflush(stdout);
    char line[4096];
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        printf("{\"echo\": \"%s\"}\n", line);
        fflush(stdout);
    }
    return 0;
}
