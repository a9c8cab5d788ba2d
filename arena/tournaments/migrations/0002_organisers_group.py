"""The "organisers" group: its members may create tournaments (when they are not open to all)."""

from django.db import migrations


def create_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # The permission is created after migrations by default; make sure it exists now.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="organisers")
    perm = Permission.objects.get(
        codename="organise_tournament", content_type__app_label="tournaments"
    )
    group.permissions.add(perm)


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="organisers").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, remove_group)]
