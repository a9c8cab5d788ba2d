from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("duels", "0002_duel_number")]

    operations = [
        migrations.AlterField(
            model_name="duel",
            name="number",
            field=models.PositiveIntegerField(),
        ),
        migrations.AddConstraint(
            model_name="duel",
            constraint=models.UniqueConstraint(
                fields=("kind", "number"), name="duel_number_unique"
            ),
        ),
    ]
